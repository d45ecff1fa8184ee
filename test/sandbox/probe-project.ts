import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { probeBwrap } from "../../src/sandbox/bwrap.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { git, makeRepo, taskDir, tempDir, writeFiles } from "../helpers/repo.js";
import type { Requirement } from "../helpers/system-deps.js";

// A project whose agent `probe` is a shell script, run under a chosen [sandbox] mode (the sandbox suites).

export const BUBBLEWRAP: Requirement = {
  what: "bubblewrap able to create a sandbox here",
  install: "apt-get install bubblewrap (and allow unprivileged user namespaces)",
  find: () => (probeBwrap().available ? "bwrap" : undefined),
};

export interface RunJson {
  task_id: string;
  state: {
    outcome: string;
    report: { status: string; changes: { path: string }[]; findings: { title: string }[] };
  };
}

/** A project whose agent `probe` is the given shell script; [sandbox] as asked (`default`: not set). */
export function project(
  script: string,
  sandbox: "required" | "auto" | "off" | "default",
  extra = "",
): string {
  const root = makeRepo({ "README.md": "# project\n", "src/app.txt": "original\n" });
  const agentDir = tempDir("caesar-sandbox-agent-");
  const agent = join(agentDir, "probe.sh");
  writeFileSync(
    agent,
    `#!/bin/sh\n${script}\nprintf '{"protocol":"caesar.report/v1","status":"success","summary":"probed"}' > "$CAESAR_REPORT_PATH"\n`,
  );
  chmodSync(agent, 0o755);
  writeFiles(root, {
    ".caesar/config.toml": `${sandbox === "default" ? "" : `[sandbox]\nmode = "${sandbox}"\n`}${extra}\n[[agent]]\nid = "probe"\nbin = "${agent}"\n[[agent]]\nid = "probe-too"\nbin = "${agent}"\n`,
  });
  git(root, "add", ".");
  git(root, "commit", "-qm", "caesar config");
  return root;
}

export async function run(
  root: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<RunJson & { raw: string }> {
  const result = await runCaesar(["run", "--json", "--agent", "probe", ...args, "probe"], {
    cwd: root,
    env,
    timeoutMs: 120_000,
  });
  const body = parseJsonOutput<RunJson>(result);
  return { ...body, raw: readFileSync(join(taskDir(root, body.task_id), "raw.log"), "utf8") };
}

/** `WROTE <path>` or `DENIED <path>` for each path, on stdout (raw.log). */
export const tryWrite = (paths: string[]) =>
  paths
    .map((path) => `(echo pwned > "${path}") 2>/dev/null && echo "WROTE ${path}" || echo "DENIED ${path}"`)
    .join("\n");
