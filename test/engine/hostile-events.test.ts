import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { git, makeRepo, taskDir, tempDir, writeFiles } from "../helpers/repo.js";

// events.jsonl is the agent's to write too: what it writes there must not break caesar's own record of
// the task, pass for caesar's end of it, or cost caesar unbounded memory.

interface Finished {
  type: string;
  seq: number;
  status?: string;
  summary?: string;
  by?: string;
}

const REPORT = `printf '{"protocol":"caesar.report/v1","status":"success","summary":"done"}' > "$CAESAR_REPORT_PATH"`;

/** A project whose agent `hostile` is this shell script (and more configuration, if given). */
function project(script: string, config = ""): string {
  const root = makeRepo({ "README.md": "# hostile events\n" });
  const agent = join(tempDir("caesar-hostile-events-"), "hostile.sh");
  writeFileSync(agent, `#!/bin/sh\n${script}\n`);
  chmodSync(agent, 0o755);
  writeFiles(root, { ".caesar/config.toml": `${config}[[agent]]\nid = "hostile"\nbin = "${agent}"\n` });
  git(root, "add", ".");
  git(root, "commit", "-qm", "agent");
  return root;
}

async function logs(root: string, id: string): Promise<Finished[]> {
  const result = await runCaesar(["logs", id, "--json"], { cwd: root });
  expect(result.code, result.stderr).toBe(0);
  return result.stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Finished);
}

describe("an agent's hostile events.jsonl", () => {
  it("a seq of 2^53-1 does not push caesar's own numbering out of range: the task ends and reads as it should", async () => {
    const root = project(
      `printf '{"protocol":"caesar.event/v1","seq":9007199254740991,"at":"2026-01-01T00:00:00.000Z","task_id":"%s","type":"progress","message":"big"}\\n' "$CAESAR_TASK_ID" >> "$CAESAR_EVENTS_PATH"\n${REPORT}`,
    );
    const run = await runCaesar(["run", "--json", "--agent", "hostile", "number high"], { cwd: root });
    expect(run.code, run.stderr).toBe(0);
    const { task_id: id } = parseJsonOutput<{ task_id: string }>(run);
    const status = await runCaesar(["status", id, "--json"], { cwd: root });
    expect(status.code, status.stderr).toBe(0);
    const finished = (await logs(root, id)).filter((event) => event.type === "finished");
    expect(finished).toHaveLength(1);
    expect(finished[0]!.seq).toBeLessThan(2 ** 31);
  });

  it("a copy of caesar's finished line appended after it is the agent's, however exactly it copies it", async () => {
    const done = join(tempDir("caesar-forger-"), "copied");
    // A detached copier waits for caesar's finished line, then appends it again claiming success.
    const root = project(
      `setsid sh -c 'while :; do line=$(grep "\\"type\\":\\"finished\\"" "$CAESAR_EVENTS_PATH" | head -n 1); if [ -n "$line" ]; then printf "%s\\n" "$line" | sed "s/\\"status\\":\\"failed\\"/\\"status\\":\\"success\\"/" >> "$CAESAR_EVENTS_PATH"; touch ${done}; exit 0; fi; sleep 0.05; done' >/dev/null 2>&1 &\nexit 3`,
      // Unsandboxed: caesar's OS sandbox ends every process of the agent's with it (its own pid namespace),
      // so no copier is left to write after the finished line there.
      '[sandbox]\nmode = "off"\n',
    );
    const run = await runCaesar(["run", "--json", "--agent", "hostile", "fail"], { cwd: root });
    expect(run.code).toBe(1);
    const { task_id: id } = parseJsonOutput<{ task_id: string }>(run);
    for (let i = 0; i < 100 && !existsQuietly(done); i++) await new Promise((r) => setTimeout(r, 100));
    expect(existsQuietly(done)).toBe(true);
    const finished = (await logs(root, id)).filter((event) => event.type === "finished");
    expect(finished.map((event) => [event.status, event.by])).toEqual([
      ["failed", "caesar"],
      ["success", "agent"],
    ]);
    // Both lines carry the same seq and at: only the order tells them apart.
    const lines = readFileSync(join(taskDir(root, id), "events.jsonl"), "utf8")
      .trim()
      .split("\n");
    expect(lines.filter((line) => line.includes('"type":"finished"'))).toHaveLength(2);
  });

  it("a sparse events.jsonl of 8 GiB costs no memory and breaks no reader: its overlong line is skipped, and said", async () => {
    const root = project(`truncate -s 8G "$CAESAR_EVENTS_PATH"\n${REPORT}`);
    const run = await runCaesar(["run", "--json", "--agent", "hostile", "grow"], {
      cwd: root,
      timeoutMs: 120_000,
    });
    expect(run.code, run.stderr).toBe(0);
    const { task_id: id } = parseJsonOutput<{ task_id: string }>(run);
    const shown = await runCaesar(["logs", id], { cwd: root, timeoutMs: 120_000 });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout + shown.stderr).not.toContain("a bug in caesar");
  }, 180_000);
});

function existsQuietly(path: string): boolean {
  try {
    readFileSync(path);
    return true;
  } catch {
    return false;
  }
}
