import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const FIXTURE_BIN = fileURLToPath(new URL("../fixtures/bin/", import.meta.url));

const GIT_ENV = {
  GIT_AUTHOR_NAME: "test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "test",
  GIT_COMMITTER_EMAIL: "test@example.com",
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, env: { ...process.env, ...GIT_ENV }, encoding: "utf8" }).trim();
}

export function tempDir(prefix = "caesar-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A real git repository with the given files committed (one commit, unless `commit: false`). */
export function makeRepo(
  files: Record<string, string> = { "README.md": "# test\n" },
  options: { commit?: boolean } = {},
): string {
  const dir = tempDir("caesar-repo-");
  git(dir, "init", "--quiet", "--initial-branch=main");
  writeFiles(dir, files);
  writeFileSync(join(dir, ".gitignore"), ".caesar/tasks/\n.caesar/wt/\n.caesar/state/\n.caesar/chat/\n");
  if (options.commit !== false) {
    git(dir, "add", ".");
    git(dir, "commit", "--quiet", "-m", "initial");
  }
  return dir;
}

export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

/** Write .caesar/config.toml, with `[[agent]]` entries for the named fixture scripts. */
export function writeConfig(root: string, body: string, fixtureAgents: string[] = []): void {
  const agents = fixtureAgents
    .map(
      (name) =>
        `[[agent]]\nid = "${name}"\nbin = "${join(FIXTURE_BIN, `${name}.sh`)}"\nargs = ["{{prompt}}"]\n`,
    )
    .join("\n");
  writeFiles(root, { ".caesar/config.toml": `${body}\n${agents}` });
}

export function readJson<T = Record<string, unknown>>(path: string): T {
  return JSON.parse(readFileSync(path, "utf8")) as T;
}

export function taskDir(root: string, id: string): string {
  return join(root, ".caesar", "tasks", id);
}

/**
 * Where caesar keeps a task's own records (authoritative state.json and plan.json) in a test repository:
 * `<git common dir>/caesar/tasks/<id>` (the task directory holds a mirror caesar never decides from).
 */
export function taskRecordDir(root: string, id: string): string {
  return join(root, ".git", "caesar", "tasks", id);
}
