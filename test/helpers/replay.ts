import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type {
  AgentAdapter,
  LaunchContext,
  LineAgentAdapter,
  StreamOutcome,
} from "../../src/agents/adapter.js";
import { type EventBody, EventSchema } from "../../src/protocol/event.js";
import type { Fixture } from "./agent-fixtures.js";
import { makeLaunch } from "./launch.js";

export interface Replay {
  events: EventBody[];
  outcome: StreamOutcome;
  launch: LaunchContext;
}

/** A launch in a throwaway directory, for translators that read files the CLI wrote (codex -o). */
export function scratchLaunch(
  adapter: AgentAdapter,
  overrides: Partial<Parameters<typeof makeLaunch>[0]> = {},
) {
  const root = overrides.workspace
    ? dirname(overrides.workspace)
    : mkdtempSync(join(tmpdir(), `caesar-replay-${adapter.id}-`));
  const workspace = overrides.workspace ?? join(root, "work");
  const taskDir = overrides.taskDir ?? join(root, "task");
  mkdirSync(workspace, { recursive: true });
  mkdirSync(join(taskDir, "runtime"), { recursive: true });
  return makeLaunch({
    agent: adapter.id,
    env: { HOME: root, PATH: "/usr/bin:/bin" },
    ...overrides,
    workspace,
    taskDir,
  });
}

/** Feed a recorded run through an adapter's translator, line by line, as the engine does. */
export async function replayFixture(adapter: LineAgentAdapter, fixture: Fixture): Promise<Replay> {
  const launch = scratchLaunch(adapter, { mode: fixture.header.mode });
  for (const [name, content] of Object.entries(fixture.header.outputs)) {
    writeFileSync(join(launch.runtimeDir, name), content);
  }
  const translator = adapter.createTranslator(launch);
  const events: EventBody[] = [];
  for (const { stream, line } of fixture.lines) {
    events.push(...(stream === "stdout" ? translator.stdout(line) : (translator.stderr?.(line) ?? [])));
  }
  const outcome = await translator.finish(fixture.exit);
  events.push(...(outcome.events ?? []));
  return { events, outcome, launch };
}

/** Problems with events as the writer would stamp them: each must be a valid caesar.event/v1 line. */
export function invalidEvents(events: EventBody[]): string[] {
  return events.flatMap((body, seq) => {
    const result = EventSchema.safeParse({
      protocol: "caesar.event/v1",
      seq,
      at: new Date().toISOString(),
      task_id: "t_replay01",
      ...body,
    });
    return result.success ? [] : [`${JSON.stringify(body).slice(0, 200)}: ${result.error.message}`];
  });
}
