import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runCaesar } from "../helpers/cli.js";
import { chat, FIXTURES, makeChatRoot } from "./helpers.js";

// `caesar chat` starts from a bundle of its own (dist/cli/chat.cjs), writes its output straight to its
// descriptors when they are pipes, files or sockets, and defines only the subcommand it runs. None of
// that may change what it does.

const PACKAGE = fileURLToPath(new URL("../../", import.meta.url));

/** bin/, dist/ and package.json of the built package, copied (so that the copy can lose a file). */
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

describe("the `caesar` command (bin/caesar, the launcher npm links)", () => {
  it("is what package.json installs, and works through npm's chain of symlinks", async () => {
    const manifest = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8")) as {
      version: string;
      bin: Record<string, string>;
    };
    expect(manifest.bin).toEqual({ caesar: "bin/caesar" });
    expect(statSync(join(PACKAGE, "bin", "caesar")).mode & 0o111).toBe(0o111);
    // As `npm install` lays it out: node_modules/.bin/caesar -> ../caesar/bin/caesar, the package
    // itself a symlink (a global install, `npm link`).
    const project = join(makeChatRoot(), "..", "project");
    mkdirSync(join(project, "node_modules", ".bin"), { recursive: true });
    symlinkSync(join(copyOfPackage()), join(project, "node_modules", "caesar"));
    symlinkSync("../caesar/bin/caesar", join(project, "node_modules", ".bin", "caesar"));
    const launcher = join(project, "node_modules", ".bin", "caesar");
    const version = await runCaesar(["--version"], { launcher });
    expect(version).toMatchObject({ code: 0, stdout: `${manifest.version}\n` });
    // Run by name from its own folder (`sh caesar`): $0 has no slash.
    const byName = spawnSync("sh", ["caesar", "--version"], {
      cwd: join(project, "node_modules", ".bin"),
      encoding: "utf8",
    });
    expect(byName).toMatchObject({ status: 0, stdout: `${manifest.version}\n` });
    const run = await postThrough(launcher);
    expect(run.post).toMatchObject({ code: 0, stdout: expect.stringContaining("Posted #1 to c") });
    expect(JSON.parse(run.read.stdout)).toMatchObject({ messages: [{ seq: 1, from: "a", title: "hi" }] });
  }, 120_000);

  it("starts `caesar chat` without NODE_EXTRA_CA_CERTS (Node would parse it, unused); other commands keep it", async () => {
    // Node warns at start-up when the file cannot be read: the warning shows whether Node saw the variable.
    const env = { NODE_EXTRA_CA_CERTS: join(makeChatRoot(), "missing-certificates.pem") };
    const root = makeChatRoot();
    const launcher = join(PACKAGE, "bin", "caesar");
    const direct = await runCaesar(["chat", "init", "c", "--root", root], { env });
    expect(direct.code).toBe(0);
    expect(direct.stderr).toContain("Ignoring extra certs");
    const chatRun = await runCaesar(["chat", "post", "c", "--root", root, "--from", "a", "--title", "t"], {
      env,
      launcher,
    });
    expect(chatRun).toMatchObject({ code: 0, stderr: "" });
    const other = await runCaesar(["ps", "--root", root], { env, launcher });
    expect(other.stderr).toContain("Ignoring extra certs");
  }, 120_000);
});

describe("caesar chat's own start-up", () => {
  it("runs from its own bundle, and from the whole CLI's when that bundle is missing, alike", async () => {
    const copy = copyOfPackage();
    const own = await postThrough(join(copy, "bin", "caesar.js"));
    rmSync(join(copy, "dist", "cli", "chat.cjs"));
    const whole = await postThrough(join(copy, "bin", "caesar.js"));
    for (const run of [own, whole]) {
      expect(run.init.code).toBe(0);
      expect(run.post).toMatchObject({ code: 0, stdout: expect.stringContaining("Posted #1 to c") });
      expect(JSON.parse(run.read.stdout)).toMatchObject({ messages: [{ seq: 1, from: "a", title: "hi" }] });
    }
    expect(own.post.stdout).toBe(whole.post.stdout);
    // Six processes and a copy of dist/: generous on a loaded 2-core machine.
  }, 180_000);

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
