import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CAESAR_GIT_IDENTITY } from "../../workspace/git.js";

export const DEMO_OBJECTIVE =
  'replace "Hello " with "Hello, " in greet.js; create CHANGELOG.md containing "- greet: add the missing comma"';

/** A throwaway git repository with one small file and one commit, for `caesar demo`. */
export function makeDemoRepository(): string {
  const dir = mkdtempSync(join(tmpdir(), "caesar-demo-"));
  writeFileSync(join(dir, "greet.js"), 'export function greet(name) {\n  return "Hello " + name + "!";\n}\n');
  writeFileSync(join(dir, "README.md"), "# demo\n\nA throwaway repository made by `caesar demo`.\n");
  writeFileSync(join(dir, ".gitignore"), ".caesar/tasks/\n.caesar/wt/\n.caesar/state/\n.caesar/chat/\n");
  const run = (args: string[]) =>
    execFileSync("git", args, { cwd: dir, env: { ...process.env, ...CAESAR_GIT_IDENTITY }, stdio: "ignore" });
  run(["init", "--quiet", "--initial-branch=main"]);
  run(["add", "."]);
  run(["commit", "--quiet", "-m", "demo: initial commit"]);
  return dir;
}
