import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TaskStateInput } from "../../src/engine/store/state.js";
import type { CaesarEvent } from "../../src/protocol/event.js";

export const FIXTURES = new URL("../fixtures/ui/", import.meta.url);

/** The events of a fixture stream (test/fixtures/ui/streams/<name>.events.jsonl). */
export function readStream(name: string): CaesarEvent[] {
  const text = readFileSync(new URL(`streams/${name}.events.jsonl`, FIXTURES), "utf8");
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as CaesarEvent);
}

export function readFixtureState(name: string): unknown {
  return JSON.parse(readFileSync(new URL(`states/${name}.state.json`, FIXTURES), "utf8"));
}

const created: string[] = [];

/** Remove every fixture project made so far (call from afterAll, once no process reads them). */
export function removeFixtureProjects(): void {
  for (const root of created.splice(0)) rmSync(root, { recursive: true, force: true });
}

/** A temporary project whose task directories the test writes by hand, as a conductor would. */
export class FixtureProject {
  readonly root = mkdtempSync(join(tmpdir(), "caesar-ui-"));

  constructor() {
    created.push(this.root);
  }

  taskDir(id: string): string {
    return join(this.root, ".caesar", "tasks", id);
  }

  /** Write a task's state.json; by default running, with this test process as its live conductor. */
  writeState(id: string, state: Partial<TaskStateInput> = {}): void {
    const dir = this.taskDir(id);
    mkdirSync(dir, { recursive: true });
    const now = new Date().toISOString();
    const full: TaskStateInput = {
      version: 1,
      id,
      phase: "running",
      created_at: now,
      updated_at: now,
      started_at: now,
      agent: "codex",
      objective: "Do something useful",
      mode: "write",
      isolation: "worktree",
      root: this.root,
      workspace: join(this.root, ".caesar", "wt", id),
      conductor: { pid: process.pid },
      ...state,
    };
    writeFileSync(join(dir, "state.json"), `${JSON.stringify(full, null, 2)}\n`);
  }

  /** Append events (seq and protocol filled in when missing). */
  appendEvents(id: string, events: Partial<CaesarEvent>[]): void {
    const lines = events.map((event, index) =>
      JSON.stringify({
        protocol: "caesar.event/v1",
        seq: index,
        task_id: id,
        at: new Date().toISOString(),
        ...event,
      }),
    );
    appendFileSync(join(this.taskDir(id), "events.jsonl"), lines.map((line) => `${line}\n`).join(""));
  }

  writeQuestionFile(id: string, questionId: string, question: string, askedAt = new Date()): void {
    const dir = join(this.taskDir(id), "questions");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, `${questionId}.json`),
      JSON.stringify({
        protocol: "caesar.question/v1",
        id: questionId,
        task_id: id,
        question,
        asked_at: askedAt.toISOString(),
      }),
    );
  }
}

export function ago(ms: number): string {
  return new Date(Date.now() - ms).toISOString();
}

/** The same events moved in time so that the last one happens at `lastAt`. */
export function shiftTo(events: CaesarEvent[], lastAt: string): CaesarEvent[] {
  const last = Date.parse(events[events.length - 1]!.at);
  const delta = Date.parse(lastAt) - last;
  return events.map((event) => ({ ...event, at: new Date(Date.parse(event.at) + delta).toISOString() }));
}
