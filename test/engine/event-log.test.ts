import { appendFileSync, chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EventWriter, readEvents } from "../../src/engine/store/event-log.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { git, makeRepo, taskDir, tempDir, writeFiles } from "../helpers/repo.js";

describe("events.jsonl shared by the agent and caesar", () => {
  it("ends the agent's unterminated last line before caesar's event, which stays whole", async () => {
    const path = join(tempDir(), "events.jsonl");
    const agentLine = {
      protocol: "caesar.event/v1",
      seq: 0,
      at: "2026-01-01T00:00:00.000Z",
      task_id: "t_0000aaaa",
      type: "progress",
      message: "one",
    };
    writeFileSync(path, `${JSON.stringify(agentLine)}\n{"protocol":"caesar.event/v1","seq":1,"ty`);
    const writer = new EventWriter(path, "t_0000aaaa");
    const written = await writer.append({ type: "progress", message: "caesar's" });
    expect(written.seq).toBe(1);
    const read = await readEvents(path);
    expect(read.events.map((event) => (event as { message?: string }).message)).toEqual(["one", "caesar's"]);
    expect(read.rejected).toEqual([expect.objectContaining({ line: 2 })]);
    // The next append follows on, without another blank line or a lost event.
    appendFileSync(path, `${JSON.stringify({ ...agentLine, seq: 7, message: "agent again" })}\n`);
    const next = await writer.append({ type: "progress", message: "after" });
    expect(next.seq).toBe(8);
    expect(readFileSync(path, "utf8").endsWith(`${JSON.stringify(next)}\n`)).toBe(true);
  });

  it("end to end: an agent killed mid-line does not swallow the task's finished event", async () => {
    const root = makeRepo();
    const agent = join(tempDir("caesar-partial-"), "partial.sh");
    writeFileSync(
      agent,
      `#!/bin/sh\nprintf '{"protocol":"caesar.event/v1","seq":50,"at":"x","task_id":"%s","type":"prog' "$CAESAR_TASK_ID" >> "$CAESAR_EVENTS_PATH"\nexit 3\n`,
    );
    chmodSync(agent, 0o755);
    writeFiles(root, { ".caesar/config.toml": `[[agent]]\nid = "partial"\nbin = "${agent}"\n` });
    git(root, "add", ".");
    git(root, "commit", "-qm", "config");
    const run = await runCaesar(["run", "--json", "--agent", "partial", "write half a line"], { cwd: root });
    const id = parseJsonOutput<{ task_id: string }>(run).task_id;
    const logs = await runCaesar(["logs", id, "--json"], { cwd: root });
    const types = logs.stdout
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { type: string }).type);
    expect(types.at(-1)).toBe("finished");
    expect(types.filter((type) => type === "finished")).toHaveLength(1);
    // Ended by caesar's next append — or, when the agent wrote it while caesar was appending its own, the
    // two glued on one line, from which readers still take caesar's event (the test below).
    expect(readFileSync(join(taskDir(root, id), "events.jsonl"), "utf8")).toMatch(/"type":"prog(\n|\{)/);
  });

  it("an event glued after another writer's half line is still read, and the half line said", async () => {
    const path = join(tempDir("caesar-glued-"), "events.jsonl");
    const caesars = {
      protocol: "caesar.event/v1",
      seq: 1,
      at: "2026-01-01T00:00:00.000Z",
      task_id: "t_0000aaaa",
    };
    writeFileSync(
      path,
      `${JSON.stringify({ ...caesars, seq: 0, type: "progress", message: "before" })}\n{"protocol":"caesar.event/v1","seq":50,"type":"prog${JSON.stringify({ ...caesars, type: "finished", status: "success", summary: "done" })}\n`,
    );
    const read = await readEvents(path);
    expect(read.events.map((event) => event.type)).toEqual(["progress", "finished"]);
    expect(read.rejected).toEqual([
      expect.objectContaining({ line: 2, problem: expect.stringContaining("glued") }),
    ]);
  });
});
