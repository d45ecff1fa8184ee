import { lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PathMissingError, PathRefusedError, WorkspaceFiles } from "../../../src/agents/acp/workspace-fs.js";
import { tempDir } from "../../helpers/repo.js";

function layout() {
  const root = tempDir("caesar-acp-fs-");
  const workspace = join(root, "work");
  const taskDir = join(root, "task");
  const outside = join(root, "outside");
  for (const dir of [workspace, taskDir, outside]) mkdirSync(dir, { recursive: true });
  writeFileSync(join(workspace, "a.txt"), "one\ntwo\nthree\nfour\n");
  writeFileSync(join(outside, "secret.txt"), "secret\n");
  symlinkSync(outside, join(workspace, "escape"));
  symlinkSync(join(outside, "secret.txt"), join(workspace, "secret-link.txt"));
  return { root, workspace, taskDir, outside };
}

describe("WorkspaceFiles: fs/read_text_file and fs/write_text_file inside the task's roots only", () => {
  it("reads inside the workspace, with line and limit; a missing file is missing, not refused", async () => {
    const { workspace, taskDir } = layout();
    const files = new WorkspaceFiles({ read: [workspace, taskDir], write: [workspace, taskDir] });
    expect(await files.read(join(workspace, "a.txt"))).toBe("one\ntwo\nthree\nfour\n");
    expect(await files.read(join(workspace, "a.txt"), 2, 2)).toBe("two\nthree");
    await expect(files.read(join(workspace, "nope.txt"))).rejects.toBeInstanceOf(PathMissingError);
  });

  it("refuses outside, through a directory link, through a file link, with .., and relative paths", async () => {
    const { workspace, outside, taskDir } = layout();
    const files = new WorkspaceFiles({ read: [workspace, taskDir], write: [workspace, taskDir] });
    for (const path of [
      join(outside, "secret.txt"),
      join(workspace, "escape", "secret.txt"),
      join(workspace, "secret-link.txt"),
      `${workspace}/../outside/secret.txt`,
      "a.txt",
    ]) {
      await expect(files.read(path), path).rejects.toBeInstanceOf(PathRefusedError);
      await expect(files.write(path, "x"), path).rejects.toBeInstanceOf(PathRefusedError);
    }
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("secret\n");
    // A new file under the link is outside too (resolved through its nearest existing ancestor).
    await expect(files.write(join(workspace, "escape", "new", "planted.txt"), "x")).rejects.toBeInstanceOf(
      PathRefusedError,
    );
  });

  it("writes atomically, creating directories; a link at the target is replaced, never followed", async () => {
    const { workspace, outside, taskDir } = layout();
    const files = new WorkspaceFiles({ read: [workspace], write: [workspace, taskDir] });
    await files.write(join(workspace, "src", "deep", "new.ts"), "export {};\n");
    expect(readFileSync(join(workspace, "src", "deep", "new.ts"), "utf8")).toBe("export {};\n");
    await files.write(join(taskDir, "report.json"), "{}");
    expect(readFileSync(join(taskDir, "report.json"), "utf8")).toBe("{}");
    // A dangling link in the workspace pointing outside: its target would be outside, so it is refused.
    symlinkSync(join(outside, "dangling.txt"), join(workspace, "dangling.txt"));
    await expect(files.write(join(workspace, "dangling.txt"), "x")).rejects.toBeInstanceOf(PathRefusedError);
    expect(() => lstatSync(join(outside, "dangling.txt"))).toThrow();
  });

  it("a read-only task's writes: the report only — not the workspace, not the rest of the task directory", async () => {
    const { workspace, taskDir } = layout();
    const files = new WorkspaceFiles({
      read: [workspace, taskDir],
      write: [],
      writeFiles: [join(taskDir, "report.json")],
    });
    await expect(files.write(join(taskDir, "answers", "q_1.json"), "{}")).rejects.toBeInstanceOf(
      PathRefusedError,
    );
    await expect(files.write(join(workspace, "a.txt"), "changed")).rejects.toThrow(
      /outside what this task may write/,
    );
    expect(readFileSync(join(workspace, "a.txt"), "utf8")).toBe("one\ntwo\nthree\nfour\n");
    await files.write(join(taskDir, "report.json"), "{}");
  });
});
