import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "./repo.js";
import { findExecutable, isCi, missingLine, TMUX } from "./system-deps.js";

// The helper every suite with a system requirement goes through: it must not take a stand-in for the
// real thing (the fresh-machine proof hides programs behind empty files), and must find one off PATH.

function script(dir: string, name: string, body: string, mode = 0o755): string {
  const path = join(dir, name);
  writeFileSync(path, body);
  chmodSync(path, mode);
  return path;
}

describe("findExecutable", () => {
  it("passes over a file that is not executable, and an executable that is not the program", () => {
    const dir = tempDir();
    const hidden = script(dir, "hidden", "", 0o644);
    const empty = script(dir, "empty", ""); // run by the shell: exits 0, says nothing
    const other = script(dir, "other", "#!/bin/sh\necho 'something else 1.0'\n");
    const real = script(dir, "real", "#!/bin/sh\necho 'tmux 3.4'\n");
    expect(findExecutable([hidden, empty, other], ["-V"], /^tmux /)).toBeUndefined();
    expect(findExecutable([hidden, empty, other, real], ["-V"], /^tmux /)).toBe(real);
  });

  it("looks names up on PATH, in order, and takes paths as they are", () => {
    const first = tempDir();
    const second = tempDir();
    script(first, "prog", "#!/bin/sh\nexit 1\n");
    const good = script(second, "prog", "#!/bin/sh\necho 'prog 2'\n");
    const env = { PATH: `${first}:${second}` };
    expect(findExecutable(["prog"], ["--version"], /^prog /, env)).toBe(good);
    expect(findExecutable(["/nonexistent/prog", "prog"], ["--version"], /^prog /, env)).toBe(good);
    expect(findExecutable(["prog"], ["--version"], /^prog /, { PATH: first })).toBeUndefined();
  });
});

describe("what a missing requirement says", () => {
  it("names the requirement and how to install it, on one line", () => {
    const line = missingLine(TMUX);
    expect(line).toBe("skipped: needs tmux, not found; to run it: apt-get install tmux");
    expect(line).not.toContain("\n");
  });

  it("is a failure under CI=true (and CI=1), a skip otherwise", () => {
    expect(isCi({ CI: "true" })).toBe(true);
    expect(isCi({ CI: "1" })).toBe(true);
    expect(isCi({ CI: "false" })).toBe(false);
    expect(isCi({ CI: "" })).toBe(false);
    expect(isCi({})).toBe(false);
  });
});
