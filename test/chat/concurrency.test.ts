import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseMessage } from "../../src/chat/message.js";
import { parseJsonOutput } from "../helpers/cli.js";
import { chat, FIXTURES, makeChatRoot, runFixture, start, startChat, until } from "./helpers.js";

// Real processes racing on one folder. Assertions are on outcomes only (the machines are shared).

describe("concurrent posters", () => {
  it("8 posters x 200 posts get sequences 1..1600, no duplicate, no gap, every file whole, while a reader reads", async () => {
    const root = makeChatRoot();
    expect((await chat(root, ["init", "race"])).code).toBe(0);
    const stop = join(root, "..", "stop");
    const reader = start(join(FIXTURES, "reader.mjs"), [root, "race", "reader", stop]);
    const posters = Array.from({ length: 8 }, (_, index) =>
      runFixture("poster.mjs", [root, "race", `poster-${index + 1}`, "200", "4096"]),
    );
    const results = await Promise.all(posters);
    for (const result of results) expect(result.stderr).toBe("");
    writeFileSync(stop, "");
    const read = await reader.done;
    expect(read.stderr).toBe("");

    const dir = join(root, "race");
    const files = readdirSync(dir).filter((name) => /^\d/.test(name));
    const seqs = files.map((name) => Number(name.split("-")[0])).sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: 1600 }, (_, index) => index + 1));
    const perPoster = new Map<string, number[]>();
    for (const file of files) {
      const seq = Number(file.split("-")[0]);
      const parsed = parseMessage(readFileSync(join(dir, file), "utf8"), file, seq, "race");
      if (!parsed.ok) throw new Error(`${file} ${parsed.problem}`);
      expect(parsed.message.warnings).toEqual([]);
      expect(parsed.message.body).toMatch(/\nend poster-\d #\d+ \d+\n$/);
      const index = Number(/ #(\d+) /.exec(parsed.message.body.split("\n").at(-2)!)![1]);
      perPoster.set(parsed.message.from, [...(perPoster.get(parsed.message.from) ?? []), index]);
    }
    // Each poster's 200 messages are all there, in the order it posted them.
    expect(perPoster.size).toBe(8);
    for (const indexes of perPoster.values())
      expect(indexes).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    // Nothing left behind: no lock, no temp file.
    expect(
      readdirSync(dir)
        .filter((name) => !/^\d/.test(name))
        .sort(),
    ).toEqual([".cursors", "_meta.json"]);

    // The reader saw every message exactly once, each one whole, and its cursor ends at the top.
    const summary = JSON.parse(read.stdout) as { scans: number; delivered: number[]; problems: string[] };
    expect(summary.problems).toEqual([]);
    expect(summary.delivered).toEqual(Array.from({ length: 1600 }, (_, index) => index + 1));
    expect(readFileSync(join(dir, ".cursors", "reader.txt"), "utf8")).toBe("1600");
  }, 300_000);

  it("the CLI and the library post to the same channel without duplicate sequences", async () => {
    const root = makeChatRoot();
    await chat(root, ["init", "mixed"]);
    const library = runFixture("poster.mjs", [root, "mixed", "lib", "40", "100"]);
    const cli = Array.from({ length: 6 }, (_, index) =>
      chat(root, ["post", "mixed", "--from", `cli-${index}`, "--title", `from the CLI ${index}`, "--json"]),
    );
    const [libraryResult, ...cliResults] = await Promise.all([library, ...cli]);
    expect(libraryResult.code).toBe(0);
    const cliSeqs = cliResults.map((result) => parseJsonOutput<{ seq: number }>(result).seq);
    const seqs = readdirSync(join(root, "mixed"))
      .filter((name) => /^\d/.test(name))
      .map((name) => Number(name.split("-")[0]))
      .sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: 46 }, (_, index) => index + 1));
    expect(new Set(cliSeqs).size).toBe(6);
  }, 120_000);
});

describe("posters killed mid-post", () => {
  it("SIGKILL at random moments leaves no duplicate, no gap, no half message, and the channel keeps working", async () => {
    const root = makeChatRoot();
    await chat(root, ["init", "kills"]);
    const dir = join(root, "kills");
    // A lock left by a killed poster is taken over at once (its holder is recorded and gone); a short
    // stale period for the one a poster killed between its mkdir and its record leaves (no holder).
    const env = { CAESAR_CHAT_LOCK_STALE_MS: "3000" };
    const stop = join(root, "..", "stop");
    const reader = start(join(FIXTURES, "reader.mjs"), [root, "kills", "reader", stop], env);
    let started = 0;
    const launch = () =>
      start(join(FIXTURES, "poster.mjs"), [root, "kills", `p${++started}`, "100000", "512"], env);
    const posters = Array.from({ length: 4 }, launch);
    // 16 kills, each of a poster somewhere in its loop (writing, flushing, waiting for or holding the
    // lock, linking, flushing the folder), each replaced by a new poster.
    for (let kill = 0; kill < 16; kill++) {
      await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 250));
      const victim = Math.floor(Math.random() * posters.length);
      posters[victim]!.child.kill("SIGKILL");
      await posters[victim]!.done;
      posters[victim] = launch();
    }
    for (const poster of posters) poster.child.kill("SIGKILL");
    await Promise.all(posters.map((poster) => poster.done));

    // A post goes through and clears what the killed posters left (a lock, temp files).
    await new Promise((resolve) => setTimeout(resolve, 400));
    const after = await chat(
      root,
      ["post", "kills", "--from", "survivor", "--title", "after the kills", "--json"],
      {
        env: { CAESAR_CHAT_LOCK_STALE_MS: "300" },
      },
    );
    expect(after.code).toBe(0);
    writeFileSync(stop, "");
    const read = await reader.done;
    expect(read.stderr).toBe("");

    const files = readdirSync(dir).filter((name) => /^\d/.test(name));
    const seqs = files.map((name) => Number(name.split("-")[0])).sort((a, b) => a - b);
    expect(seqs.length).toBeGreaterThan(1);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, index) => index + 1));
    expect(parseJsonOutput<{ seq: number }>(after).seq).toBe(seqs.length);
    for (const file of files) {
      const seq = Number(file.split("-")[0]);
      const parsed = parseMessage(readFileSync(join(dir, file), "utf8"), file, seq, "kills");
      if (!parsed.ok) throw new Error(`${file} ${parsed.problem}`);
      expect(parsed.message.warnings).toEqual([]);
      if (parsed.message.from !== "survivor") expect(parsed.message.body).toMatch(/\nend p\d+ #\d+ \d+\n$/);
    }
    // No lock, no temp file left.
    expect(
      readdirSync(dir)
        .filter((name) => !/^\d/.test(name))
        .sort(),
    ).toEqual([".cursors", "_meta.json"]);
    // The reader, running throughout, never met half a message and received each one once.
    const summary = JSON.parse(read.stdout) as { delivered: number[]; problems: string[] };
    expect(summary.problems.filter((problem) => !problem.startsWith(`#${seqs.length}:`))).toEqual([]);
    expect(summary.delivered).toEqual(seqs);
  }, 300_000);
});

describe("racing init", () => {
  it("exactly one of 8 processes creating the same channel succeeds", async () => {
    const root = makeChatRoot();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        chat(root, ["init", "contested", "--topic", `by ${index}`, "--members", `agent-${index}`, "--json"]),
      ),
    );
    const winners = results.filter((result) => result.code === 0);
    expect(winners).toHaveLength(1);
    for (const loser of results.filter((result) => result.code !== 0)) {
      expect(loser.code).toBe(1);
      expect(parseJsonOutput<{ error: { code: string } }>(loser).error.code).toBe("channel_exists");
    }
    // The metadata on disk is the winner's, whole.
    const winner = parseJsonOutput<{ topic: string }>(winners[0]!);
    const meta = JSON.parse(readFileSync(join(root, "contested", "_meta.json"), "utf8")) as { topic: string };
    expect(meta.topic).toBe(winner.topic);
  }, 120_000);
});

describe("racing claims", () => {
  it("exactly one of 8 claimers wins a marker; the others exit 3 and name the winner", async () => {
    const root = makeChatRoot();
    await chat(root, ["init", "tasks"]);
    await chat(root, ["task", "tasks", "fix-login", "--from", "lead"]);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        chat(root, ["claim", "tasks", "fix-login", "--as", `agent-${index}`, "--json"]),
      ),
    );
    const winners = results.filter((result) => result.code === 0);
    expect(winners).toHaveLength(1);
    const winner = parseJsonOutput<{ claimed: boolean; holder: { agent: string } }>(winners[0]!);
    expect(winner.claimed).toBe(true);
    const losers = results.filter((result) => result.code !== 0);
    expect(losers).toHaveLength(7);
    for (const loser of losers) {
      expect(loser.code).toBe(3);
      const body = parseJsonOutput<{ claimed: boolean; holder: { agent: string } }>(loser);
      expect(body.claimed).toBe(false);
      expect(body.holder.agent).toBe(winner.holder.agent);
    }
    // The marker was renamed once, to the winner's name.
    const agent = winner.holder.agent;
    expect(readdirSync(join(root, "tasks")).filter((name) => name.startsWith("task-"))).toEqual([
      `task-fix-login.CLAIMED-${agent}.md`,
    ]);
  }, 120_000);
});

describe("a sequence lock left by a killed poster", () => {
  it("is taken over at once — its holder is recorded and gone — not after the stale period", async () => {
    const root = makeChatRoot();
    await chat(root, ["init", "stale"]);
    const dir = join(root, "stale");
    const holder = start(join(FIXTURES, "hold-lock.mjs"), [dir]);
    await until(() => holder.stdout().includes("held"), "the lock holder");
    holder.child.kill("SIGKILL");
    await holder.done;
    expect(existsSync(join(dir, "_seq.lock"))).toBe(true);

    // A stale period of ten minutes: the post can only go through, within the test's timeout, by the
    // holder's pid, not by the lock's age.
    const result = await chat(
      root,
      ["post", "stale", "--from", "alice", "--title", "after the crash", "--json"],
      {
        env: { CAESAR_CHAT_LOCK_STALE_MS: "600000" },
      },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(parseJsonOutput<{ seq: number }>(result).seq).toBe(1);
    expect(readdirSync(dir).filter((name) => name.startsWith("_seq.lock"))).toEqual([]);
  }, 120_000);
});

describe("wait across processes", () => {
  for (const mode of ["watch", "poll"] as const) {
    it(`a waiting agent wakes on a message for it (${mode})`, async () => {
      const root = makeChatRoot();
      await chat(root, ["init", "live"]);
      const env = mode === "poll" ? { CAESAR_CHAT_POLL: "1" } : {};
      const waiter = startChat(
        root,
        ["wait", "live", "--as", "bob", "--timeout", "90", "--interval", "0.2", "--json"],
        env,
      );
      // Give the waiter time to block first; the outcome does not depend on it.
      await new Promise((resolve) => setTimeout(resolve, 500));
      await chat(root, ["post", "live", "--from", "bob", "--title", "my own"]);
      await chat(root, ["post", "live", "--from", "alice", "--to", "carol", "--title", "for carol"]);
      await chat(root, ["post", "live", "--from", "alice", "--to", "bob", "--title", "for bob"]);
      const result = await waiter.done;
      expect(result.code).toBe(0);
      const body = parseJsonOutput<{
        timed_out: boolean;
        mode: string;
        messages: { title: string }[];
        cursor: { after: number };
      }>(result);
      expect(body.timed_out).toBe(false);
      expect(body.mode).toBe(mode);
      expect(body.messages.map((message) => message.title)).toEqual(["for bob"]);
      expect(body.cursor.after).toBe(3);
    }, 120_000);
  }
});
