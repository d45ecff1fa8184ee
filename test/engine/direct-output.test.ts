import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { git, makeRepo, taskDir, tempDir, writeConfig } from "../helpers/repo.js";

// A plain-text agent (a custom [[agent]] program: no stream of its own for caesar to read) writes its stdout
// and stderr straight into the task's raw.log, which caesar never copies: its output is there in the order
// it wrote it, and caesar sees it go by its size. Only without caesar's OS sandbox (`[sandbox] mode =
// "off"` here): a sandboxed agent never holds raw.log open for writing, and its output is copied.

interface Finished {
  task_id: string;
  state: { outcome: string; report: { status: string; summary: string } | null };
}

function projectWith(agents: Record<string, string>, policy = ""): string {
  const root = makeRepo({ "README.md": "# project\n" });
  const folder = tempDir("caesar-direct-agents-");
  const config = Object.entries(agents).map(([id, script]) => {
    const bin = join(folder, `${id}.sh`);
    writeFileSync(bin, `#!/bin/sh\n${script}\n`, { mode: 0o755 });
    return `[[agent]]\nid = "${id}"\nbin = "${bin}"\n`;
  });
  writeConfig(root, `[sandbox]\nmode = "off"\n${policy}\n${config.join("\n")}`);
  git(root, "add", ".caesar/config.toml");
  git(root, "commit", "-qm", "agents");
  return root;
}

const report = (summary: string) =>
  `printf '{"protocol":"caesar.report/v1","status":"success","summary":"${summary}"}' > "$CAESAR_REPORT_PATH"`;

async function run(root: string, agent: string): Promise<Finished> {
  const result = await runCaesar(["run", "--json", "--agent", agent, agent], {
    cwd: root,
    timeoutMs: 120_000,
  });
  expect(result.code, result.stderr).toBe(0);
  return parseJsonOutput<Finished>(result);
}

describe("a plain-text agent's output, straight into raw.log", () => {
  it("is there as the agent wrote it, stdout and stderr in their order, and its end is read for the report", async () => {
    const root = projectWith({
      talker: [
        'for i in 1 2 3 4 5; do echo "out $i"; echo "err $i" >&2; done',
        "printf 'é✓😀 no newline at the end' >&2",
        // The report as the end of its output (the degraded tier finds it there), none in report.json.
        'printf \'\\n```json caesar:report\\n{"protocol":"caesar.report/v1","status":"success","summary":"talked"}\\n```\\n\'',
      ].join("\n"),
    });
    const finished = await run(root, "talker");
    expect(finished.state.outcome).toBe("succeeded");
    expect(finished.state.report).toMatchObject({ status: "success", summary: "talked" });
    const raw = readFileSync(join(taskDir(root, finished.task_id), "raw.log"), "utf8");
    const said = Array.from({ length: 5 }, (_, i) => `out ${i + 1}\nerr ${i + 1}\n`).join("");
    expect(raw).toContain(`${said}é✓😀 no newline at the end\n\`\`\`json caesar:report\n`);
  });

  it("counts as output for the stall notice: an agent that keeps writing gets none, a silent one does", async () => {
    const root = projectWith(
      {
        // 6 s, a line every 0.2 s: never 3 s of silence.
        writer: `i=0\nwhile [ $i -lt 30 ]; do echo "tick $i"; sleep 0.2; i=$((i+1)); done\n${report("wrote")}`,
        silent: `echo "one line"\nsleep 7\n${report("slept")}`,
      },
      '[policy]\nstall_notice = "3s"\n',
    );
    const notices = (id: string) =>
      readFileSync(join(taskDir(root, id), "events.jsonl"), "utf8")
        .split("\n")
        .filter((line) => line.includes("no output from the agent")).length;
    const [writer, silent] = await Promise.all([run(root, "writer"), run(root, "silent")]);
    expect(writer.state.report?.summary).toBe("wrote");
    expect(silent.state.report?.summary).toBe("slept");
    expect(notices(writer.task_id)).toBe(0);
    expect(notices(silent.task_id)).toBeGreaterThanOrEqual(1);
  });
});
