import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  type ChatContext,
  claimTask,
  getRoster,
  initChannel,
  makeChatContext,
  openTask,
} from "../../src/chat/index.js";
import { parseJsonOutput } from "../helpers/cli.js";
import { chat, makeChatRoot } from "./helpers.js";

let ctx: ChatContext;
let dir: string;
beforeEach(async () => {
  ctx = makeChatContext({ root: makeChatRoot(), env: {} });
  dir = (await initChannel(ctx, "t")).channel.dir;
});

const taskFiles = () =>
  readdirSync(dir)
    .filter((name) => name.startsWith("task-"))
    .sort();

describe("claims are the reference's: renaming task-<id>.md", () => {
  it("open, then claim: the marker becomes task-<id>.CLAIMED-<agent>.md, content kept", async () => {
    await openTask(ctx, "t", "12", { from: "alice", title: "Fix the login test", body: "It fails on CI.\n" });
    expect(taskFiles()).toEqual(["task-12.md"]);
    const claim = await claimTask(ctx, "t", "task-12.md", { as: "bob_2" });
    expect(claim).toMatchObject({ claimed: true, marker: "task-12.md", file: "task-12.CLAIMED-bob-2.md" });
    expect(taskFiles()).toEqual(["task-12.CLAIMED-bob-2.md"]);
    expect(readFileSync(join(dir, "task-12.CLAIMED-bob-2.md"), "utf8")).toContain("It fails on CI.");
  });

  it("a marker that was never opened cannot be claimed", async () => {
    const claim = await claimTask(ctx, "t", "task-404.md", { as: "bob" });
    expect(claim).toMatchObject({ claimed: false, reason: "missing" });
    expect(taskFiles()).toEqual([]);
  });

  it("the holder claiming again fails too, and so does anyone else, naming the holder", async () => {
    await openTask(ctx, "t", "job", { from: "alice" });
    expect((await claimTask(ctx, "t", "job", { as: "bob" })).claimed).toBe(true);
    expect(await claimTask(ctx, "t", "job", { as: "bob" })).toMatchObject({
      claimed: false,
      reason: "claimed",
      holder: { agent: "bob" },
    });
    expect(await claimTask(ctx, "t", "task-job", { as: "carol" })).toMatchObject({
      claimed: false,
      reason: "claimed",
      holder: { agent: "bob" },
    });
  });

  it("four concurrent claims by the same agent: exactly one succeeds", async () => {
    await openTask(ctx, "t", "job", { from: "alice" });
    const results = await Promise.all([1, 2, 3, 4].map(() => claimTask(ctx, "t", "job", { as: "bob" })));
    expect(results.filter((result) => result.claimed)).toHaveLength(1);
  });

  it("refuses anything but a task marker, so a claim never renames the channel's own files", async () => {
    for (const name of [
      "_meta.json",
      "README.md",
      "0001-bob-message.md",
      "task-.md",
      "../x",
      "task-1.md.bak",
    ]) {
      await expect(claimTask(ctx, "t", name, { as: "mallory" }), name).rejects.toMatchObject({
        code: "invalid_task",
      });
    }
    expect(existsSync(join(dir, "_meta.json"))).toBe(true);
  });

  it("opening a task twice, or one already claimed, is refused", async () => {
    await openTask(ctx, "t", "7", { from: "alice" });
    await expect(openTask(ctx, "t", "task-7.md", { from: "alice" })).rejects.toMatchObject({
      code: "task_exists",
    });
    await claimTask(ctx, "t", "7", { as: "bob" });
    await expect(openTask(ctx, "t", "7", { from: "alice" })).rejects.toMatchObject({ code: "task_claimed" });
  });

  it("a claim an older caesar recorded under _claims/ still counts, and the roster lists every kind", async () => {
    mkdirSync(join(dir, "_claims", "fix-login"), { recursive: true });
    writeFileSync(
      join(dir, "_claims", "fix-login", "claim.json"),
      '{"marker":"fix-login","agent":"zoe","ts":"x"}',
    );
    await expect(openTask(ctx, "t", "fix-login", { from: "alice" })).rejects.toMatchObject({
      code: "task_claimed",
    });
    // Someone writes the marker by hand all the same: the old claim still wins.
    writeFileSync(join(dir, "task-fix-login.md"), "by hand\n");
    expect(await claimTask(ctx, "t", "fix-login", { as: "bob" })).toMatchObject({
      claimed: false,
      holder: { agent: "zoe" },
    });
    await openTask(ctx, "t", "2", { from: "alice" });
    await openTask(ctx, "t", "3", { from: "alice" });
    await claimTask(ctx, "t", "3", { as: "Carol" });
    const roster = await getRoster(ctx, "t");
    expect(roster.tasks).toEqual(["task-2.md", "task-fix-login.md"]);
    expect(roster.claims.map((claim) => [claim.marker, claim.agent])).toEqual([
      ["task-3.md", "carol"],
      ["fix-login", "zoe"],
    ]);
  });
});

describe("caesar chat claim, from the command line", () => {
  it("exit 3 for the second claimer and for a re-claim; the first exits 0", async () => {
    const root = makeChatRoot();
    await chat(root, ["init", "t"]);
    const missing = await chat(root, ["claim", "t", "task-12.md", "--as", "bob"]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain("there is no task-12.md");
    expect((await chat(root, ["task", "t", "12", "--from", "alice", "--title", "Fix it"])).code).toBe(0);
    const first = await chat(root, ["claim", "t", "task-12.md", "--as", "bob"]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("bob claimed task-12.md in t");
    const second = await chat(root, ["claim", "t", "task-12.md", "--as", "alice", "--json"]);
    expect(second.code).toBe(3);
    expect(parseJsonOutput(second)).toMatchObject({
      claimed: false,
      reason: "claimed",
      holder: { agent: "bob" },
    });
    const again = await chat(root, ["claim", "t", "12", "--as", "bob"]);
    expect(again.code).toBe(3);
    expect(again.stderr).toContain("already claimed by bob");
  });

  it("four concurrent `claim t job --as bob` processes: exactly one exits 0", async () => {
    const root = makeChatRoot();
    await chat(root, ["init", "t"]);
    await chat(root, ["task", "t", "job", "--from", "alice"]);
    const results = await Promise.all(
      [1, 2, 3, 4].map(() => chat(root, ["claim", "t", "job", "--as", "bob"])),
    );
    expect(results.map((result) => result.code).sort()).toEqual([0, 3, 3, 3]);
  });
});
