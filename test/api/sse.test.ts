import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/api/server.js";
import { makeRepo } from "../helpers/repo.js";
import { SseClient, type SseMessage } from "../helpers/sse.js";
import { appendEvents, writeTask } from "../helpers/workspace.js";

/** Server-sent events over a real HTTP server: live events, resumption after a reconnect, across restarts. */

const TASK = "t_live0001";
let root: string;
let dir: string;
let server: RunningServer;
let seq = 0;

function append(count: number): void {
  appendEvents(
    dir,
    TASK,
    Array.from({ length: count }, (_, i) => ({ type: "progress", message: `step ${seq + i + 1}` })),
    seq,
  );
  seq += count;
}

function ordinals(messages: SseMessage[]): number[] {
  return messages.filter((m) => m.event === "caesar").map((m) => Number(m.id));
}

function messagesOf(messages: SseMessage[]): string[] {
  return messages.filter((m) => m.event === "caesar").map((m) => JSON.parse(m.data).event.message);
}

async function start(): Promise<RunningServer> {
  return startServer({ root, version: "test", port: 0, token: "s".repeat(40), writeAddress: false });
}

beforeAll(async () => {
  root = makeRepo();
  // A running task whose conductor is this very process: alive, so never finished as abandoned.
  dir = writeTask(root, {
    id: TASK,
    changeNumber: 1,
    phase: "running",
    state: { conductor: { pid: process.pid }, outcome: null },
  });
  append(3);
  server = await start();
});

afterAll(async () => {
  await server?.close();
});

describe("a task's event stream", () => {
  it("sends the backlog, then new events live, each with its ordinal as id, and the task's state", async () => {
    const client = await SseClient.connect(`${server.url}api/tasks/${TASK}/events`);
    expect(client.status).toBe(200);
    await client.until((m) => ordinals(m).length === 3 && m.some((x) => x.event === "task"), "the backlog");
    expect(client.messages[0]!.event).toBe("hello");
    expect(JSON.parse(client.messages[0]!.data)).toEqual({
      runId: server.context.index.runId,
      revision: expect.any(Number),
    });
    const task = JSON.parse(client.of("task")[0]!.data);
    expect(task.task).toMatchObject({ id: TASK, phase: "running", events: 3 });
    append(2);
    await client.until((m) => ordinals(m).length === 5, "two live events");
    expect(ordinals(client.messages)).toEqual([1, 2, 3, 4, 5]);
    expect(messagesOf(client.messages)).toEqual(["step 1", "step 2", "step 3", "step 4", "step 5"]);
    client.close();
  });

  it("resumes after Last-Event-ID: what was appended while disconnected arrives, nothing is repeated", async () => {
    append(3);
    const client = await SseClient.connect(`${server.url}api/tasks/${TASK}/events`, { "Last-Event-ID": "5" });
    await client.until((m) => ordinals(m).length === 3, "the missed events");
    append(1);
    await client.until((m) => ordinals(m).length === 4, "a new event");
    expect(ordinals(client.messages)).toEqual([6, 7, 8, 9]);
    expect(messagesOf(client.messages)).toEqual(["step 6", "step 7", "step 8", "step 9"]);
    client.close();
  });

  it("resumes across a server restart: the ids are derived from the file, not from the server", async () => {
    const oldRun = server.context.index.runId;
    await server.close();
    append(2); // while no server runs
    server = await start();
    const client = await SseClient.connect(`${server.url}api/tasks/${TASK}/events`, { "Last-Event-ID": "9" });
    await client.until((m) => ordinals(m).length === 2, "the events written while the server was down");
    expect(ordinals(client.messages)).toEqual([10, 11]);
    expect(JSON.parse(client.messages[0]!.data).runId).not.toBe(oldRun);
    client.close();
  });

  it("a Last-Event-ID that is not an ordinal starts from the beginning; one past the end waits for new events", async () => {
    const bogus = await SseClient.connect(`${server.url}api/tasks/${TASK}/events`, {
      "Last-Event-ID": "../../x",
    });
    await bogus.until((m) => ordinals(m).length === 11, "every event");
    bogus.close();
    const ahead = await SseClient.connect(`${server.url}api/tasks/${TASK}/events`, {
      "Last-Event-ID": "999",
    });
    await ahead.until((m) => m.some((x) => x.event === "task"), "the task");
    append(1);
    await ahead.until((m) => ordinals(m).length === 1, "the next event");
    expect(ordinals(ahead.messages)).toEqual([12]);
    ahead.close();
  });

  it("sends the task again when its state changes (here: it finishes)", async () => {
    const client = await SseClient.connect(`${server.url}api/tasks/${TASK}/events`, {
      "Last-Event-ID": "12",
    });
    await client.until((m) => m.some((x) => x.event === "task"), "the task");
    const state = JSON.parse(JSON.stringify(server.context.index.task(TASK)!.state));
    writeFileSync(
      join(dir, "state.json"),
      JSON.stringify({
        ...state,
        phase: "finished",
        outcome: "succeeded",
        finished_at: new Date().toISOString(),
      }),
    );
    await client.until(
      (m) => m.filter((x) => x.event === "task").some((x) => JSON.parse(x.data).task.phase === "finished"),
      "the finished state",
    );
    client.close();
  });

  it("a task created a moment ago is found at once, before any watcher reported it", async () => {
    writeTask(root, { id: "t_fresh001", changeNumber: 9, events: [{ type: "started", agent: "alpha" }] });
    const response = await fetch(`${server.url}api/tasks/t_fresh001`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { task: { id: string } }).task.id).toBe("t_fresh001");
  });

  it("an unknown task is a 404, an invalid id a 400", async () => {
    expect((await fetch(`${server.url}api/tasks/t_nope0000/events`)).status).toBe(404);
    expect((await fetch(`${server.url}api/tasks/..%2F..%2Fetc/events`)).status).toBe(400);
  });
});

describe("the workspace stream", () => {
  it("sends the summaries of tasks that change, and new tasks", async () => {
    const client = await SseClient.connect(`${server.url}api/stream`);
    await client.until((m) => m.some((x) => x.event === "hello"), "hello");
    append(1);
    await client.until(
      (m) =>
        m.some(
          (x) =>
            x.event === "tasks" &&
            JSON.parse(x.data).tasks.some(
              (t: { id: string; events: number }) => t.id === TASK && t.events === 13,
            ),
        ),
      "the task's update",
    );
    writeTask(root, { id: "t_newer001", changeNumber: 2, events: [{ type: "started", agent: "alpha" }] });
    await client.until(
      (m) =>
        m.some(
          (x) =>
            x.event === "tasks" &&
            JSON.parse(x.data).tasks.some((t: { id: string }) => t.id === "t_newer001"),
        ),
      "the new task",
    );
    client.close();
  });

  it("closing the server ends open streams", async () => {
    const client = await SseClient.connect(`${server.url}api/stream`);
    await client.until((m) => m.length > 0, "hello");
    expect(server.context.streams.size).toBeGreaterThan(0);
    await server.close();
    await client
      .until(() => false, "the end", 10_000)
      .catch((error: Error) => expect(error.message).toContain("stream ended"));
    server = await start();
  });
});
