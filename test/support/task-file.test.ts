import { execFileSync } from "node:child_process";
import {
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  appendTaskFile,
  openTaskFile,
  readTaskFileText,
  UnsafeTaskFileError,
} from "../../src/support/task-file.js";
import { tempDir } from "../helpers/repo.js";

function setUp(): { dir: string; outside: string } {
  const dir = tempDir("caesar-taskfile-");
  const outside = join(tempDir("caesar-outside-"), "ledger.json");
  writeFileSync(outside, '{"entries":[]}');
  return { dir, outside };
}

async function refusal(run: () => Promise<unknown>): Promise<UnsafeTaskFileError> {
  try {
    await run();
  } catch (error) {
    if (error instanceof UnsafeTaskFileError) return error;
    throw error;
  }
  throw new Error("not refused");
}

describe("the one opener of task files", () => {
  it("appends through no symlink: the link is moved aside, its target untouched", async () => {
    const { dir, outside } = setUp();
    symlinkSync(outside, join(dir, "events.jsonl"));
    const error = await refusal(() => appendTaskFile(join(dir, "events.jsonl"), "line\n"));
    expect(error.kind).toBe("link");
    expect(error.code).toBe("unsafe_task_file");
    expect(readFileSync(outside, "utf8")).toBe('{"entries":[]}');
    expect(existsSync(join(dir, "events.jsonl"))).toBe(false);
    expect(lstatSync(error.movedTo!).isSymbolicLink()).toBe(true);
  });

  it("reads no FIFO (and does not wait on it)", async () => {
    const { dir } = setUp();
    execFileSync("mkfifo", [join(dir, "report.json")]);
    const error = await refusal(() => readTaskFileText(join(dir, "report.json")));
    expect(error.kind).toBe("fifo");
    expect(readdirSync(dir)).toEqual([expect.stringMatching(/^report\.json\.quarantined-/)]);
  });

  it("appends to no FIFO", async () => {
    const { dir } = setUp();
    execFileSync("mkfifo", [join(dir, "events.jsonl")]);
    expect((await refusal(() => appendTaskFile(join(dir, "events.jsonl"), "x\n"))).kind).toBe("fifo");
  });

  it("refuses a directory, a hard link to a file elsewhere and a file past the cap", async () => {
    const { dir, outside } = setUp();
    mkdirSync(join(dir, "state.json"));
    expect((await refusal(() => readTaskFileText(join(dir, "state.json")))).kind).toBe("directory");
    linkSync(outside, join(dir, "report.json"));
    expect((await refusal(() => openTaskFile(join(dir, "report.json"), "write"))).kind).toBe("hard link");
    expect(readFileSync(outside, "utf8")).toBe('{"entries":[]}');
    writeFileSync(join(dir, "task.json"), "x".repeat(100));
    expect((await refusal(() => readTaskFileText(join(dir, "task.json"), { maxBytes: 10 }))).kind).toBe(
      "oversized",
    );
  });

  it("refuses a folder of the task directory that is a link", async () => {
    const { dir } = setUp();
    const elsewhere = tempDir("caesar-elsewhere-");
    symlinkSync(elsewhere, join(dir, "checks"));
    const error = await refusal(() => openTaskFile(join(dir, "checks", "1.log"), "write", { within: dir }));
    expect(error.kind).toBe("link");
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it("creates a missing file 0600 whatever the umask, and reads none that is missing", async () => {
    const { dir } = setUp();
    await appendTaskFile(join(dir, "events.jsonl"), "one\n");
    expect(statSync(join(dir, "events.jsonl")).mode & 0o777).toBe(0o600);
    expect(await readTaskFileText(join(dir, "events.jsonl"))).toBe("one\n");
    expect(await readTaskFileText(join(dir, "missing.json"))).toBeUndefined();
  });
});
