import { renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TaskIndex } from "../../src/api/index/task-index.js";
import { makeRepo } from "../helpers/repo.js";
import { appendEvents, writeQuestion, writeTask } from "../helpers/workspace.js";

/** The index is derived from the task directories: it follows them incrementally and rebuilds to the same. */

const open: TaskIndex[] = [];
afterEach(() => {
  for (const index of open.splice(0)) index.close();
});

async function index(root: string, watch = true): Promise<TaskIndex> {
  const built = await TaskIndex.open(root, { watch });
  open.push(built);
  return built;
}

/** Wait for the index to reach a condition through its own watchers (no explicit refresh). */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`the index never saw ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function timelineOf(built: TaskIndex) {
  return built.timeline
    .page({ limit: 1000 })
    .entries.map((e) => [e.task.id, e.kind, e.type, e.ordinal, e.actor, e.at]);
}

describe("the task index", () => {
  it("builds from the directories: states, events by byte range, questions; tolerant of bad lines", async () => {
    const root = makeRepo();
    const dir = writeTask(root, {
      id: "t_a0000001",
      changeNumber: 1,
      events: [{ type: "started", agent: "alpha" }],
    });
    writeFileSync(join(dir, "events.jsonl"), 'not json\n{"protocol":"caesar.event/v1"}\n', { flag: "a" });
    appendEvents(dir, "t_a0000001", [{ type: "message", text: "after the junk" }], 5);
    writeFileSync(
      join(dir, "events.jsonl"),
      '{"protocol":"caesar.event/v1","seq":9,"at":"x","task_id":"t_a00',
      { flag: "a" },
    );
    writeQuestion(dir, "t_a0000001", "q_1", "Really?");
    writeTask(root, { id: "t_a0000002", changeNumber: 2 });
    const built = await index(root, false);
    expect(built.size).toBe(2);
    const task = built.task("t_a0000001")!;
    expect(task.spans).toHaveLength(2);
    expect(task.questions.map((q) => q.question.id)).toEqual(["q_1"]);
    expect(built.byChangeNumber(2)?.id).toBe("t_a0000002");
    expect(built.timeline.size).toBe(2);
  });

  it("follows appends, new tasks, new questions (even written and renamed in one tick) and removals", async () => {
    const root = makeRepo();
    const dir = writeTask(root, {
      id: "t_b0000001",
      changeNumber: 1,
      phase: "running",
      state: { conductor: { pid: process.pid }, outcome: null },
    });
    const built = await index(root);
    const start = built.revision;
    appendEvents(
      dir,
      "t_b0000001",
      [
        { type: "progress", message: "one" },
        { type: "progress", message: "two" },
      ],
      0,
    );
    await until(() => built.task("t_b0000001")!.spans.length === 2, "the appended events");
    expect(built.revision).toBeGreaterThan(start);

    // The asker's way: a temp file and its rename, back to back.
    const questions = join(dir, "questions");
    writeQuestion(dir, "t_b0000001", "q_tmp", "placeholder");
    renameSync(join(questions, "q_tmp.json"), join(questions, ".q_x.tmp"));
    renameSync(join(questions, ".q_x.tmp"), join(questions, "q_x.json"));
    await until(() => built.task("t_b0000001")!.questions.length === 1, "the question");

    writeTask(root, { id: "t_b0000002", changeNumber: 2 });
    writeTask(root, { id: "t_b0000003", changeNumber: 3 });
    await until(() => built.size === 3, "two new tasks");

    rmSync(join(root, ".caesar", "tasks", "t_b0000002"), { recursive: true });
    await until(() => built.size === 2, "the removal");
    expect(built.task("t_b0000002")).toBeUndefined();
    expect(built.byChangeNumber(2)).toBeUndefined();
  });

  it("sees a running task finish, and the `finished` event the engine appends after the final state", async () => {
    const root = makeRepo();
    const dir = writeTask(root, {
      id: "t_c0000001",
      changeNumber: 1,
      phase: "running",
      state: { conductor: { pid: process.pid }, outcome: null },
    });
    const built = await index(root);
    const task = built.task("t_c0000001")!;
    const state = JSON.parse(JSON.stringify(task.state));
    writeFileSync(
      join(dir, "state.json"),
      JSON.stringify({
        ...state,
        phase: "finished",
        outcome: "succeeded",
        finished_at: new Date().toISOString(),
      }),
    );
    await until(() => task.state.phase === "finished", "the final state");
    appendEvents(dir, "t_c0000001", [{ type: "finished", status: "success" }], 0);
    await until(() => task.spans.length === 1, "the finished event");
    expect(task.lastEventType).toBe("finished");
  });

  it("records applies and cancels from state.json as the user's entries", async () => {
    const root = makeRepo();
    const dir = writeTask(root, { id: "t_d0000001", changeNumber: 1 });
    const built = await index(root);
    const state = JSON.parse(JSON.stringify(built.task("t_d0000001")!.state));
    writeFileSync(
      join(dir, "state.json"),
      JSON.stringify({
        ...state,
        applied: { at: "2031-01-01T00:00:00.000Z", by: "cli", head: null, files: ["a"] },
      }),
    );
    await built.refresh(["t_d0000001"]);
    const page = built.timeline.page({ actor: "user", limit: 10 });
    expect(page.entries.map((e) => [e.kind, e.data])).toEqual([
      ["apply", { by: "cli", head: null, files: ["a"] }],
    ]);
  });

  it("is rebuildable: a fresh index of the same files holds the same tasks and timeline", async () => {
    const root = makeRepo();
    const dir = writeTask(root, {
      id: "t_e0000001",
      changeNumber: 1,
      phase: "running",
      state: { conductor: { pid: process.pid }, outcome: null },
    });
    writeTask(root, {
      id: "t_e0000002",
      changeNumber: 2,
      agent: "beta",
      events: [{ type: "started", agent: "beta" }],
    });
    const live = await index(root);
    appendEvents(
      dir,
      "t_e0000001",
      [
        { type: "started", agent: "alpha" },
        { type: "answer", question_id: "q", answer: "yes" },
      ],
      0,
    );
    await until(() => live.task("t_e0000001")!.spans.length === 2, "the events");
    const rebuilt = await index(root, false);
    expect(rebuilt.list().map((t) => [t.id, t.state])).toEqual(live.list().map((t) => [t.id, t.state]));
    expect(new Set(timelineOf(rebuilt).map(String))).toEqual(new Set(timelineOf(live).map(String)));
    expect(rebuilt.runId).not.toBe(live.runId);
  });
});
