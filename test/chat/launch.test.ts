import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runCaesar } from "../helpers/cli.js";
import { chat, FIXTURES, makeChatRoot } from "./helpers.js";

// The `caesar` command npm installs is bin/caesar.js, a plain Node script loading the built CLI; `caesar
// chat`, which agents run once per message, goes through it like every other command.

const PACKAGE = fileURLToPath(new URL("../../", import.meta.url));

/** bin/, dist/ and package.json of the built package, copied (so that it can be linked like an install). */
function copyOfPackage(): string {
  const copy = join(makeChatRoot(), "..", "package");
  cpSync(join(PACKAGE, "bin"), join(copy, "bin"), { recursive: true });
  cpSync(join(PACKAGE, "dist"), join(copy, "dist"), { recursive: true });
  cpSync(join(PACKAGE, "package.json"), join(copy, "package.json"));
  return copy;
}

async function postThrough(launcher: string) {
  const root = makeChatRoot();
  const init = await runCaesar(["chat", "init", "c", "--root", root], { launcher });
  const post = await runCaesar(["chat", "post", "c", "--root", root, "--from", "a", "--title", "hi"], {
    launcher,
  });
  const read = await runCaesar(["chat", "read", "c", "--root", root, "--as", "b", "--json"], { launcher });
  return { init, post, read };
}

describe("the `caesar` command (bin/caesar.js, what npm links)", () => {
  it("is what package.json installs, and works through npm's chain of symlinks", async () => {
    const manifest = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8")) as {
      version: string;
      bin: Record<string, string>;
    };
    expect(manifest.bin).toEqual({ caesar: "bin/caesar.js" });
    expect(statSync(join(PACKAGE, "bin", "caesar.js")).mode & 0o111).toBe(0o111);
    expect(readFileSync(join(PACKAGE, "bin", "caesar.js"), "utf8")).toMatch(/^#!\/usr\/bin\/env node\n/);
    // As `npm install` lays it out: node_modules/.bin/caesar -> ../caesar/bin/caesar.js, the package
    // itself a symlink (a global install, `npm link`).
    const project = join(makeChatRoot(), "..", "project");
    mkdirSync(join(project, "node_modules", ".bin"), { recursive: true });
    symlinkSync(join(copyOfPackage()), join(project, "node_modules", "caesar"));
    symlinkSync("../caesar/bin/caesar.js", join(project, "node_modules", ".bin", "caesar"));
    const launcher = join(project, "node_modules", ".bin", "caesar");
    const version = await runCaesar(["--version"], { launcher });
    expect(version).toMatchObject({ code: 0, stdout: `${manifest.version}\n` });
    const run = await postThrough(launcher);
    expect(run.post).toMatchObject({ code: 0, stdout: expect.stringContaining("Posted #1 to c") });
    expect(JSON.parse(run.read.stdout)).toMatchObject({ messages: [{ seq: 1, from: "a", title: "hi" }] });
  }, 120_000);

  it("says how to build the CLI when dist/ is missing", async () => {
    const copy = copyOfPackage();
    rmSync(join(copy, "dist"), { recursive: true });
    const result = spawnSync(process.execPath, [join(copy, "bin", "caesar.js"), "--version"], {
      encoding: "utf8",
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("the CLI is not built (dist/ is missing)");
    expect(result.stderr).toContain("npm run build");
  });
});

describe("caesar chat's output", () => {
  it("the help lists every subcommand and a typo gets a suggestion, though a run defines only its own", async () => {
    const help = await runCaesar(["chat", "--help"]);
    for (const name of [
      "init",
      "channels",
      "roster",
      "post",
      "read",
      "wait",
      "peek",
      "task",
      "claim",
      "approve",
    ])
      expect(help.stdout).toMatch(new RegExp(`\\n  ${name} `));
    const typo = await runCaesar(["chat", "pots", "c"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("(Did you mean post?)");
    const postHelp = await runCaesar(["chat", "post", "--help"]);
    expect(postHelp.stdout).toContain("--body-file <file>");
  });

  it("a reader that stops early ends the command quietly", async () => {
    const root = makeChatRoot();
    await chat(root, ["init", "c"]);
    await chat(root, ["post", "c", "--from", "a", "--title", "long"], {
      input: `${"line\n".repeat(50_000)}`,
    });
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(
        join(PACKAGE, "bin", "caesar.js"),
        ["chat", "read", "c", "--as", "b", "--root", root],
        {
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
      });
      child.stdout.once("data", () => child.stdout.destroy());
      child.on("close", (code) => resolve({ code, stderr }));
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
  });

  it("a non-blocking pipe as stdout that fills up gets the whole output, in order", async () => {
    const python = spawnSync("python3", ["--version"]);
    if (python.status !== 0) return; // Only a Python (or shell) parent leaves such a pipe; none here.
    const root = makeChatRoot();
    await chat(root, ["init", "c"]);
    const body = Array.from({ length: 20_000 }, (_, index) => `line ${index}`).join("\n");
    await chat(root, ["post", "c", "--from", "a", "--title", "big"], { input: body });
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        "python3",
        [
          join(FIXTURES, "nonblocking-stdout.py"),
          join(PACKAGE, "bin", "caesar.js"),
          "chat",
          "read",
          "c",
          "--as",
          "b",
          "--root",
          root,
        ],
        { stdio: ["ignore", "pipe", "inherit"] },
      );
      let stdout = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk;
      });
      child.on("error", reject);
      child.on("close", () => resolve(stdout));
    });
    const summary = JSON.parse(output) as {
      code: number;
      stderr: string;
      size: number;
      head: string;
      tail: string;
    };
    expect(summary).toMatchObject({ code: 0, stderr: "", head: expect.stringContaining("#1 a -> all: big") });
    expect(summary.size).toBeGreaterThan(200_000);
    expect(summary.tail.trimEnd().endsWith("line 19999")).toBe(true);
    // The reader holds off for a second, and three processes start one after the other: generous under load.
  }, 180_000);

  it("writes to a file as to a pipe", async () => {
    const root = makeChatRoot();
    await chat(root, ["init", "c"]);
    const out = join(root, "..", "out.txt");
    const result = await runCaesar([
      "chat",
      "post",
      "c",
      "--root",
      root,
      "--from",
      "a",
      "--title",
      "to a file",
      "--json",
    ]).then(async () => {
      const child = spawn(
        "/bin/sh",
        ["-c", `"$0" chat peek c --root "$1" > "$2"`, join(PACKAGE, "bin", "caesar.js"), root, out],
        { stdio: "ignore" },
      );
      return new Promise((resolve) => child.on("close", resolve));
    });
    expect(result).toBe(0);
    expect(readFileSync(out, "utf8")).toContain("#1 a -> all: to a file");
  });
});
