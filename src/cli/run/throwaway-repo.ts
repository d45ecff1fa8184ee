import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { CAESAR_GIT_IDENTITY } from "../../workspace/git.js";

/** What caesar writes inside a project and never commits. */
const IGNORED = ".caesar/tasks/\n.caesar/wt/\n.caesar/state/\n.caesar/chat/\n";

/**
 * A throwaway git repository in the temp directory (`<prefix>XXXXXX`) holding these files in one commit
 * (`executables` among them with their x bit), for `caesar demo` and `caesar conformance`: a real
 * repository, so tasks run in it as in any project.
 */
export function makeThrowawayRepository(
  prefix: string,
  files: Record<string, string>,
  message: string,
  executables: readonly string[] = [],
): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  for (const [path, content] of Object.entries({ ...files, ".gitignore": IGNORED })) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
    if (executables.includes(path)) chmodSync(join(dir, path), 0o755);
  }
  const run = (args: string[]) =>
    execFileSync("git", args, { cwd: dir, env: { ...process.env, ...CAESAR_GIT_IDENTITY }, stdio: "ignore" });
  run(["init", "--quiet", "--initial-branch=main"]);
  run(["add", "."]);
  run(["commit", "--quiet", "-m", message]);
  return dir;
}
