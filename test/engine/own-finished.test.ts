import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openApi } from "../helpers/api.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { connectCaesar, dataOf } from "../helpers/mcp.js";
import { makeRepo, taskDir, writeConfig } from "../helpers/repo.js";

interface Finished {
  type: "finished";
  status: string;
  summary?: string;
  by?: string;
}

const finishedOf = (events: { type: string }[]) => events.filter((e) => e.type === "finished") as Finished[];

/**
 * Two `finished` events: an agent writes its own (claiming success, even claiming to be caesar's), then
 * fails. caesar's `finished` is the task's; the agent's is kept, marked as the agent's, by every reader.
 */
describe("an agent's own finished event", () => {
  it("is kept as the agent's: caesar logs, caesar run, caesar_logs and the HTTP API never take it for the task's end", async () => {
    const root = makeRepo({ "README.md": "# demo\n" });
    writeConfig(root, "", ["self-finisher"]);
    const run = await runCaesar(["run", "--agent", "self-finisher", "Do it"], {
      cwd: root,
      env: { NO_COLOR: "1" },
    });
    // The run's own account: the agent's word shown as its word, the task failed, and the exit code says so.
    expect(run.code).not.toBe(0);
    expect(run.stdout + run.stderr).toContain("says finished: success");
    expect(run.stdout + run.stderr).toContain("(the agent's, not the task's end)");

    const ps = parseJsonOutput<{ id: string }[]>(await runCaesar(["ps", "--all", "--json"], { cwd: root }));
    const id = ps[0]!.id;
    // The file keeps both lines as written (append-only): the agent's claims to be caesar's.
    const lines = readFileSync(join(taskDir(root, id), "events.jsonl"), "utf8")
      .trim()
      .split("\n");
    const raw = finishedOf(lines.map((line) => JSON.parse(line)));
    expect(raw.map((e) => [e.status, e.by])).toEqual([
      ["success", "caesar"],
      ["failed", "caesar"],
    ]);

    // caesar logs --json: the agent's marked as the agent's, caesar's as the task's end, last.
    const logs = await runCaesar(["logs", id, "--json"], { cwd: root });
    const logged = logs.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(finishedOf(logged).map((e) => [e.status, e.by])).toEqual([
      ["success", "agent"],
      ["failed", "caesar"],
    ]);
    expect(logged.at(-1)).toMatchObject({ type: "finished", by: "caesar", status: "failed" });

    // caesar_logs, as an orchestrating agent reads it.
    const mcp = await connectCaesar(["mcp", "serve"], { cwd: root });
    try {
      const { events } = dataOf<{ events: { type: string }[] }>(
        await mcp.call("caesar_logs", { task_id: id }),
      );
      expect(finishedOf(events).map((e) => e.by)).toEqual(["agent", "caesar"]);
    } finally {
      await mcp.close();
    }

    // The HTTP API's timeline.
    const api = await openApi(root);
    try {
      const response = await api.query("timeline.read", { limit: 50 });
      const body = (await response.json()) as {
        result: { entries: { kind: string; data: Finished | null }[] };
      };
      const data = body.result.entries
        .filter((entry) => entry.kind === "event" && entry.data?.type === "finished")
        .map((entry) => entry.data!);
      expect(data.map((e) => e.by).sort()).toEqual(["agent", "caesar"]);
      expect(data.find((e) => e.by === "caesar")?.status).toBe("failed");
    } finally {
      api.close();
    }
  });
});
