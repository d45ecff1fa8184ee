import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TaskStateInput } from "../../src/engine/store/state.js";

/**
 * Task directories written directly (valid state.json, events.jsonl, questions): a workspace in a known
 * state without running agents, for contract tests of what the server reads.
 */
export interface SyntheticTask {
  id: string;
  agent?: string;
  changeNumber: number;
  phase?: TaskStateInput["phase"];
  createdAt?: string;
  events?: Record<string, unknown>[];
  state?: Partial<TaskStateInput>;
}

export function writeTask(root: string, task: SyntheticTask): string {
  const dir = join(root, ".caesar", "tasks", task.id);
  mkdirSync(dir, { recursive: true });
  const at = task.createdAt ?? "2030-01-01T00:00:00.000Z";
  const state: TaskStateInput = {
    version: 1,
    id: task.id,
    phase: task.phase ?? "finished",
    created_at: at,
    updated_at: at,
    agent: task.agent ?? "alpha",
    objective: `objective of ${task.id}`,
    mode: "write",
    isolation: "inplace",
    root,
    workspace: root,
    change_number: task.changeNumber,
    outcome: (task.phase ?? "finished") === "finished" ? "succeeded" : null,
    ...task.state,
  };
  writeFileSync(join(dir, "state.json"), `${JSON.stringify(state, null, 2)}\n`);
  if (task.events) appendEvents(dir, task.id, task.events, 0);
  return dir;
}

/** Append events (protocol, seq, task_id filled in; `at` defaults to a fixed time plus the seq). */
export function appendEvents(
  dir: string,
  taskId: string,
  bodies: Record<string, unknown>[],
  firstSeq: number,
): void {
  const lines = bodies.map((body, i) =>
    JSON.stringify({
      protocol: "caesar.event/v1",
      seq: firstSeq + i,
      at: new Date(Date.UTC(2030, 0, 1, 0, 0, firstSeq + i)).toISOString(),
      task_id: taskId,
      ...body,
    }),
  );
  writeFileSync(join(dir, "events.jsonl"), `${lines.join("\n")}\n`, { flag: "a" });
}

export function writeQuestion(
  dir: string,
  taskId: string,
  id: string,
  question: string,
  answer?: string,
): void {
  mkdirSync(join(dir, "questions"), { recursive: true });
  writeFileSync(
    join(dir, "questions", `${id}.json`),
    JSON.stringify({
      protocol: "caesar.question/v1",
      id,
      task_id: taskId,
      question,
      asked_at: "2030-01-01T00:00:30.000Z",
    }),
  );
  if (answer !== undefined) {
    mkdirSync(join(dir, "answers"), { recursive: true });
    writeFileSync(
      join(dir, "answers", `${id}.json`),
      JSON.stringify({
        protocol: "caesar.answer/v1",
        id,
        task_id: taskId,
        answer,
        answered_at: "2030-01-01T00:00:40.000Z",
        answered_by: "cli",
      }),
    );
  }
}
