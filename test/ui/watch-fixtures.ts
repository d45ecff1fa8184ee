import { type TaskStateInput, TaskStateSchema } from "../../src/engine/store/state.js";
import type { CaesarEvent } from "../../src/protocol/event.js";
import { type AskedQuestion, TaskActivity } from "../../src/ui/watch/activity.js";
import type { WatchedTask } from "../../src/ui/watch/watched-task.js";
import { readFixtureState, readStream, shiftTo } from "./fixture-project.js";

export interface WatchedOptions {
  live?: boolean;
  named?: boolean;
  fileQuestions?: AskedQuestion[];
  answeredIds?: string[];
}

/** A task as `caesar watch` would see it, from a state and events — no files involved. */
export function makeWatchedTask(
  state: Partial<TaskStateInput> & { id: string },
  events: CaesarEvent[],
  options: WatchedOptions = {},
): WatchedTask {
  const activity = new TaskActivity();
  for (const event of events) activity.fold(event);
  const full = TaskStateSchema.parse({
    version: 1,
    phase: "running",
    created_at: events[0]?.at ?? "2026-11-30T12:00:00.000Z",
    updated_at: events[events.length - 1]?.at ?? "2026-11-30T12:00:00.000Z",
    started_at: events[0]?.at ?? "2026-11-30T12:00:00.000Z",
    agent: "codex",
    objective: "Do something useful",
    mode: "write",
    isolation: "worktree",
    root: "/home/ada/shop",
    workspace: `/home/ada/shop/.caesar/wt/${state.id}`,
    conductor: { pid: 4242 },
    ...state,
  });
  return {
    id: state.id,
    state: full,
    activity,
    fileQuestions: options.fileQuestions ?? [],
    answeredIds: new Set(options.answeredIds ?? []),
    live: options.live ?? full.phase !== "finished",
    named: options.named ?? false,
  };
}

/** The clock of the scenario screens. */
export const SCENARIO_NOW = Date.parse("2026-11-30T12:51:00.000Z");

/**
 * Four tasks at 12:51:00 — the same as the README's screen capture of `caesar watch`:
 * claude waiting for an answer, codex silent inside a long test run, copilot running a tool it just
 * started, opencode finished three minutes ago.
 */
export function scenarioTasks(): WatchedTask[] {
  const claude = readStream("claude").slice(0, 10);
  const codex = readStream("codex").slice(0, 10);
  const copilot = shiftTo(readStream("copilot").slice(0, 2), "2026-11-30T12:50:55.000Z");
  const opencode = readStream("opencode");
  const opencodeState = readFixtureState("codex") as TaskStateInput;
  return [
    makeWatchedTask(
      {
        id: "t_c1a0de55",
        agent: "claude",
        objective: "Add a response cache to the API client",
        isolation: "inplace",
      },
      claude,
    ),
    makeWatchedTask(
      { id: "t_7f3a9c21", agent: "codex", objective: "Fix the flaky login test in test/auth/login.test.ts" },
      codex,
    ),
    makeWatchedTask(
      {
        id: "t_c0b11075",
        agent: "copilot",
        objective: "Write hello.txt containing OK",
        mode: "write",
        started_at: "2026-11-30T12:50:40.000Z",
      },
      copilot,
    ),
    makeWatchedTask(
      {
        id: "t_0c0de123",
        agent: "opencode",
        objective: "Write hello.txt containing OK",
        phase: "finished",
        finished_at: "2026-11-30T12:47:48.800Z",
        outcome: "succeeded",
        report_status: "success",
        report: {
          ...(opencodeState.report as object),
          task_id: "t_0c0de123",
          status: "success",
          summary: "Wrote hello.txt containing OK.",
          changes: [{ path: "hello.txt", action: "added" }],
          findings: [],
          report_source: "file",
        } as unknown as TaskStateInput["report"],
      },
      opencode,
    ),
  ];
}
