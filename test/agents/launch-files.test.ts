import {
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CommandLine } from "../../src/agents/adapter.js";
import { writeLaunchFiles } from "../../src/agents/launch-files.js";
import { tempDir } from "../helpers/repo.js";

// The task directory is the agent's to write between runs: caesar never writes through what it left there.

function command(parts: Partial<CommandLine>): CommandLine {
  return { bin: "x", args: [], env: {}, cwd: "/", display: "x", ...parts };
}

/** A task directory with a runtime folder, and a folder of the user's holding their CLI's config. */
function setting(): { task: string; user: string } {
  const task = tempDir("caesar-launch-task-");
  mkdirSync(join(task, "runtime"));
  const user = tempDir("caesar-launch-user-");
  writeFileSync(join(user, "config.toml"), "the user's\n");
  return { task, user };
}

describe("writeLaunchFiles in a task directory the agent wrote", () => {
  it("refuses a CLI home the agent replaced with a link to the user's folder (no file removed or written there)", async () => {
    const { task, user } = setting();
    symlinkSync(user, join(task, "runtime", "codex-home"));
    const home = join(task, "runtime", "codex-home");
    const line = command({
      files: [{ path: join(home, ".caesar-sandbox-home"), content: "t\n" }],
      links: [{ path: join(home, "config.toml"), target: "/nonexistent" }],
    });
    await expect(writeLaunchFiles(line, task)).rejects.toMatchObject({ code: "unsafe_task_file" });
    expect(readFileSync(join(user, "config.toml"), "utf8")).toBe("the user's\n");
    expect(existsSync(join(user, ".caesar-sandbox-home"))).toBe(false);
  });

  it("replaces a link or a hard link where its file goes, leaving the file it pointed at alone", async () => {
    const { task, user } = setting();
    const soft = join(task, "runtime", "schema.json");
    const hard = join(task, "runtime", "prompt.txt");
    symlinkSync(join(user, "config.toml"), soft);
    linkSync(join(user, "config.toml"), hard);
    await writeLaunchFiles(
      command({
        files: [
          { path: soft, content: "schema\n" },
          { path: hard, content: "prompt\n" },
        ],
      }),
      task,
    );
    expect(readFileSync(join(user, "config.toml"), "utf8")).toBe("the user's\n");
    expect(lstatSync(soft).isSymbolicLink()).toBe(false);
    expect(readFileSync(soft, "utf8")).toBe("schema\n");
    expect(readFileSync(hard, "utf8")).toBe("prompt\n");
  });
});
