import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCaesar } from "../helpers/cli.js";
import { makeRepo } from "../helpers/repo.js";
import { appendEvents, writeTask } from "../helpers/workspace.js";

describe("caesar logs", () => {
  it("says which lines it refuses (an unknown protocol version), instead of skipping them in silence", async () => {
    const root = makeRepo();
    const id = "t_0000000a";
    const dir = writeTask(root, {
      id,
      changeNumber: 1,
      events: [
        { type: "started", agent: "alpha" },
        { type: "message", text: "hello" },
      ],
    });
    appendFileSync(
      join(dir, "events.jsonl"),
      `${JSON.stringify({ protocol: "caesar.event/v2", seq: 2, at: "2030-01-01T00:00:02.000Z", task_id: id, type: "hologram" })}\n`,
    );
    appendFileSync(join(dir, "events.jsonl"), "not json at all\n");
    appendEvents(dir, id, [{ type: "finished", status: "success", summary: "done" }], 4);

    const json = await runCaesar(["logs", id, "--json"], { cwd: root });
    expect(json.code).toBe(0);
    const types = json.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line).type);
    expect(types).toEqual(["started", "message", "finished"]);
    expect(json.stderr).toContain(
      'events.jsonl line 3 refused: $.protocol: unsupported protocol version "caesar.event/v2": this caesar reads caesar.event/v1',
    );
    expect(json.stderr).toContain("events.jsonl line 4 skipped: not JSON");

    const human = await runCaesar(["logs", id], { cwd: root });
    expect(human.stdout).toContain("hello");
    expect(human.stderr).toContain("line 3 refused");
  });
});
