import { readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { getApprovalStatus, makeChatContext } from "../../src/chat/index.js";
import { parseJsonOutput } from "../helpers/cli.js";
import { chat, FIXTURES, makeChatRoot, runFixture, start, startChat, until } from "./helpers.js";
import {
  findReference,
  type Reference,
  runReference,
  runReferenceScript,
  startReference,
} from "./reference.js";

// caesar against the reference implementation, chat.py, in both directions, on the same folders.
// Every case runs real processes of both tools; assertions are on outcomes, never on durations.

const found = findReference();
const CI = process.env.CI === "true";

type Json = Record<string, unknown>;
type ReadJson = {
  messages: {
    seq: number;
    from: string;
    to: string[];
    title: string;
    status: string;
    body: string;
    reply_to?: number;
    warnings: string[];
  }[];
  skipped: unknown[];
  cursor: { before: number; after: number };
};

if ("missing" in found) {
  if (CI) {
    describe("interop with the reference chat.py", () => {
      it("finds the reference (required under CI=true)", () => {
        throw new Error(`${found.missing}: the interop suite must run in CI`);
      });
    });
  } else {
    process.stderr.write(`test/chat/interop.test.ts: skipped, ${found.missing}\n`);
    describe("interop with the reference chat.py", () => {
      it.skip(`skipped: ${found.missing}`, () => {});
    });
  }
} else {
  defineInteropSuite(found);
}

function defineInteropSuite(ref: Reference): void {
  // chat.py reads the body from stdin when there is no --body: every post here passes one.
  const py = (root: string, args: string[], input?: string) =>
    runReference(ref, root, args, input === undefined ? {} : { input });
  const caesar = (root: string, args: string[], input?: string) =>
    chat(root, args, input === undefined ? {} : { input });
  const caesarJson = async <T = Json>(root: string, args: string[]): Promise<T> => {
    return parseJsonOutput<T>(await caesar(root, [...args, "--json"]));
  };

  describe("interop with the reference chat.py: channels", () => {
    it("init by either tool: the other lists it, posts to it, and refuses to init it again", async () => {
      const root = makeChatRoot();
      expect(
        (await py(root, ["init", "from-py", "--members", "alice,bob", "--topic", "made by chat.py"])).code,
      ).toBe(0);
      expect(
        (await caesar(root, ["init", "from-caesar", "--members", "carol,dan", "--topic", "made by caesar"]))
          .code,
      ).toBe(0);

      const channels = await caesarJson<{
        channels: { channel: string; topic: string; members: string[] }[];
      }>(root, ["channels"]);
      expect(channels.channels).toMatchObject([
        { channel: "from-caesar", topic: "made by caesar", members: ["carol", "dan"] },
        { channel: "from-py", topic: "made by chat.py", members: ["alice", "bob"] },
      ]);
      const pyChannels = await py(root, ["channels"]);
      expect(pyChannels.stdout).toContain("from-caesar");
      expect(pyChannels.stdout).toContain("carol, dan");
      const roster = await py(root, ["roster", "from-caesar"]);
      expect(roster.stdout).toContain("topic   : made by caesar");

      const again = await py(root, ["init", "from-caesar"]);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain("already exists");
      const exists = await caesarJson<{ error: { code: string } }>(root, ["init", "from-py"]);
      expect(exists.error.code).toBe("channel_exists");

      expect(
        (await py(root, ["post", "from-caesar", "--from", "alice", "--title", "hi from py", "--body", "b"]))
          .code,
      ).toBe(0);
      expect(
        (
          await caesar(root, [
            "post",
            "from-py",
            "--from",
            "carol",
            "--title",
            "hi from caesar",
            "--body",
            "b",
          ])
        ).code,
      ).toBe(0);
      expect((await py(root, ["read", "from-py", "--as", "bob"])).stdout).toContain("title: hi from caesar");
      const read = await caesarJson<ReadJson>(root, ["read", "from-caesar", "--as", "dan"]);
      expect(read.messages.map((message) => message.title)).toEqual(["hi from py"]);
    });
  });

  describe("interop with the reference chat.py: messages", () => {
    it("caesar posts, chat.py reads every field as written; chat.py posts, caesar reads every field", async () => {
      const root = makeChatRoot();
      await py(root, ["init", "review"]);
      const body = "# Proposal\n\n- keep `to` a list\n- a line: with a colon\n";
      const posted = await caesarJson<{ seq: number; file: string }>(root, [
        "post",
        "review",
        "--from",
        "alice",
        "--to",
        "bob,carol",
        "--title",
        "Converge: schema v0.2 #12",
        "--status",
        "proposal",
        "--body",
        body,
      ]);
      expect(posted.file).toBe("0001-alice-converge-schema-v0-2-12.md");
      const bob = await py(root, ["read", "review", "--as", "bob"]);
      expect(bob.stdout).toContain("from: alice\nto: bob, carol\n");
      expect(bob.stdout).toContain("status: proposal\ntitle: Converge: schema v0.2 #12\n---\n# Proposal");
      expect((await py(root, ["read", "review", "--as", "dan"])).stdout).toContain("no new messages for dan");

      const reply = await py(root, [
        "post",
        "review",
        "--from",
        "bob",
        "--to",
        "alice",
        "--reply",
        "1",
        "--status",
        "ack",
        "--title",
        "Agreed",
        "--body",
        "Let us do it.\n\nSecond paragraph.",
      ]);
      expect(reply.stdout).toContain("posted #2");
      const read = await caesarJson<ReadJson>(root, ["read", "review", "--as", "alice"]);
      expect(read.messages).toMatchObject([
        {
          seq: 2,
          from: "bob",
          to: ["alice"],
          reply_to: 1,
          status: "ack",
          title: "Agreed",
          body: "Let us do it.\n\nSecond paragraph.\n",
          warnings: [],
        },
      ]);
      expect(read.cursor).toEqual({ before: 0, after: 2 });
    });

    it("values are never quoted, so DMs to on/yes/no arrive in chat.py and null is not woken by its own post", async () => {
      const root = makeChatRoot();
      await caesar(root, ["init", "c"]);
      await caesar(root, ["post", "c", "--from", "no", "--to", "on", "--title", "to on"]);
      await caesar(root, ["post", "c", "--from", "null", "--to", "yes", "--title", "to yes"]);
      await caesar(root, ["post", "c", "--from", "null", "--title", "from null to all"]);
      const text = readFileSync(join(root, "c", "0001-no-to-on.md"), "utf8");
      expect(text).toContain("\nfrom: no\nto: on\n");
      expect((await py(root, ["read", "c", "--as", "on"])).stdout).toContain("title: to on");
      expect((await py(root, ["read", "c", "--as", "yes"])).stdout).toContain("title: to yes");
      const waited = await py(root, ["wait", "c", "--as", "null", "--timeout", "0.3", "--interval", "0.1"]);
      expect(waited.code).toBe(2);

      // chat.py writes names plainly too; caesar reads them the same way.
      await py(root, ["post", "c", "--from", "yes", "--to", "null", "--title", "from yes", "--body", "b"]);
      const read = await caesarJson<ReadJson>(root, ["read", "c", "--as", "null"]);
      expect(read.messages.map((message) => [message.from, message.title])).toEqual([["yes", "from yes"]]);
    });

    it("a 2 MiB message from chat.py reaches caesar's read, wait and peek (body cut, with a warning)", async () => {
      const root = makeChatRoot();
      await py(root, ["init", "big"]);
      const big = `${"z".repeat(2 * 1024 * 1024)}\nthe end\n`;
      const bodyFile = join(root, "..", "big.md");
      writeFileSync(bodyFile, big);
      await py(root, [
        "post",
        "big",
        "--from",
        "alice",
        "--to",
        "bob",
        "--title",
        "huge",
        "--body-file",
        bodyFile,
      ]);
      const waited = await caesarJson<ReadJson & { timed_out: boolean }>(root, [
        "wait",
        "big",
        "--as",
        "bob",
        "--timeout",
        "30",
      ]);
      expect(waited.timed_out).toBe(false);
      expect(waited.messages.map((message) => message.title)).toEqual(["huge"]);
      expect(waited.messages[0]!.warnings.join("\n")).toMatch(/its body is cut at 1048576 bytes/);
      const peek = await caesar(root, ["peek", "big"]);
      expect(peek.stdout).toContain("#1 alice -> bob: huge");
      // caesar refuses to write one that size, with a limit chat.py users can read.
      const refused = await caesarJson<{ error: { code: string } }>(root, [
        "post",
        "big",
        "--from",
        "bob",
        "--title",
        "back",
        "--body-file",
        bodyFile,
      ]);
      expect(refused.error.code).toBe("message_too_large");
    });
  });

  describe("interop with the reference chat.py: names and cursors", () => {
    it("channel Review, agents Alice, bob_2 and claude.code: one cursor per agent across both tools, nothing delivered twice", async () => {
      const root = makeChatRoot();
      expect((await caesar(root, ["init", "Review"])).code).toBe(0);
      const pyChannels = await py(root, ["channels"]);
      expect(pyChannels.stdout).toContain("Review");
      for (const n of [1, 2])
        await py(root, ["post", "Review", "--from", "Alice", "--title", `py ${n}`, "--body", "b"]);

      // bob_2 reads with caesar, then chat.py has nothing new for it; and the other way for claude.code.
      const bob = await caesarJson<ReadJson>(root, ["read", "Review", "--as", "bob_2"]);
      expect(bob.messages.map((message) => message.title)).toEqual(["py 1", "py 2"]);
      expect((await py(root, ["read", "Review", "--as", "bob_2"])).stdout).toContain(
        "no new messages for bob_2",
      );
      expect((await py(root, ["read", "Review", "--as", "claude.code"])).stdout).toContain("title: py 2");
      expect((await caesarJson<ReadJson>(root, ["read", "Review", "--as", "claude.code"])).messages).toEqual(
        [],
      );

      await caesar(root, ["post", "Review", "--from", "Alice", "--title", "caesar 3", "--body", "b"]);
      const bobPy = await py(root, ["read", "Review", "--as", "bob_2"]);
      expect(bobPy.stdout).toContain("title: caesar 3");
      expect(bobPy.stdout).not.toContain("title: py 1");
      expect((await caesarJson<ReadJson>(root, ["read", "Review", "--as", "bob_2"])).messages).toEqual([]);
      expect(readdirSync(join(root, "Review", ".cursors")).sort()).toEqual(["bob-2.txt", "claude-code.txt"]);

      // Alice is not woken by her own messages in either tool; a DM to Alice reaches Alice.
      expect((await caesarJson<ReadJson>(root, ["read", "Review", "--as", "Alice"])).messages).toEqual([]);
      await py(root, [
        "post",
        "Review",
        "--from",
        "bob_2",
        "--to",
        "Alice",
        "--title",
        "for Alice",
        "--body",
        "b",
      ]);
      expect(
        (await caesarJson<ReadJson>(root, ["read", "Review", "--as", "Alice"])).messages.map((m) => m.title),
      ).toEqual(["for Alice"]);
    });
  });

  describe("interop with the reference chat.py: wait", () => {
    it("caesar waits and wakes on chat.py's message; chat.py waits and wakes on caesar's", async () => {
      const root = makeChatRoot();
      await caesar(root, ["init", "live"]);
      const caesarWaiter = startChat(root, ["wait", "live", "--as", "bob", "--timeout", "90", "--json"]);
      const pyWaiter = startReference(ref, root, [
        "wait",
        "live",
        "--as",
        "carol",
        "--timeout",
        "90",
        "--interval",
        "0.1",
      ]);
      await new Promise((resolve) => setTimeout(resolve, 500));
      await py(root, [
        "post",
        "live",
        "--from",
        "alice",
        "--to",
        "bob",
        "--title",
        "for bob, from chat.py",
        "--body",
        "b",
      ]);
      await caesar(root, [
        "post",
        "live",
        "--from",
        "alice",
        "--to",
        "carol",
        "--title",
        "for carol, from caesar",
      ]);

      const woke = await caesarWaiter.done;
      expect(woke.code).toBe(0);
      expect(parseJsonOutput<ReadJson>(woke).messages.map((message) => message.title)).toEqual([
        "for bob, from chat.py",
      ]);
      const pyWoke = await pyWaiter.done;
      expect(pyWoke.code).toBe(0);
      expect(pyWoke.stdout).toContain("title: for carol, from caesar");
      expect(pyWoke.stdout).not.toContain("for bob");
    });
  });

  describe("interop with the reference chat.py: claims", () => {
    it("chat.py claims first, then caesar's claim of the same marker fails with exit 3 naming the holder; and the reverse", async () => {
      const root = makeChatRoot();
      await py(root, ["init", "t"]);
      writeFileSync(join(root, "t", "task-12.md"), "Fix the login test\n");
      expect((await py(root, ["claim", "t", "task-12.md", "--as", "alice"])).code).toBe(0);
      const lost = await caesarJson<{ claimed: boolean; holder: { agent: string } }>(root, [
        "claim",
        "t",
        "task-12.md",
        "--as",
        "bob",
      ]);
      expect(lost).toMatchObject({ claimed: false, holder: { agent: "alice" } });

      expect((await caesar(root, ["task", "t", "13", "--from", "carol"])).code).toBe(0);
      expect((await caesar(root, ["claim", "t", "task-13.md", "--as", "bob_2"])).code).toBe(0);
      const pyLost = await py(root, ["claim", "t", "task-13.md", "--as", "alice"]);
      expect(pyLost.code).toBe(3);
      // chat.py's own re-claim check: the claimed file carries the same slug.
      expect((await py(root, ["claim", "t", "task-13.md", "--as", "bob_2"])).code).toBe(3);
      expect(
        readdirSync(join(root, "t"))
          .filter((name) => name.startsWith("task-"))
          .sort(),
      ).toEqual(["task-12.CLAIMED-alice.md", "task-13.CLAIMED-bob-2.md"]);
      const roster = await caesarJson<{ claims: { marker: string; agent: string }[] }>(root, ["roster", "t"]);
      expect(roster.claims.map((claim) => [claim.marker, claim.agent])).toEqual([
        ["task-12.md", "alice"],
        ["task-13.md", "bob-2"],
      ]);
    });

    it("a race of 4 chat.py and 4 caesar claimers: exactly one wins, everyone else exits 3", async () => {
      const root = makeChatRoot();
      await caesar(root, ["init", "race"]);
      for (const round of [1, 2]) {
        await caesar(root, ["task", "race", `r${round}`, "--from", "lead"]);
        const claimers = [
          ...[1, 2, 3, 4].map((n) =>
            runReference(ref, root, ["claim", "race", `task-r${round}.md`, "--as", `py-${n}`]),
          ),
          ...[1, 2, 3, 4].map((n) =>
            caesar(root, ["claim", "race", `task-r${round}.md`, "--as", `caesar-${n}`]),
          ),
        ];
        const results = await Promise.all(claimers);
        expect(results.map((result) => result.code).sort(), results.map((r) => r.stderr).join("\n")).toEqual([
          0, 3, 3, 3, 3, 3, 3, 3,
        ]);
        const markers = readdirSync(join(root, "race")).filter((name) => name.startsWith(`task-r${round}.`));
        expect(markers).toHaveLength(1);
        expect(markers[0]).toMatch(new RegExp(`^task-r${round}\\.CLAIMED-(py|caesar)-\\d\\.md$`));
      }
    }, 180_000);
  });

  describe("interop with the reference chat.py: concurrent posts and reads", () => {
    it("chat.py and caesar posters share _seq.lock: sequences 1..N, no duplicate, while a caesar reader gets each message once, whole", async () => {
      const root = makeChatRoot();
      await py(root, ["init", "mix"]);
      const stop = join(root, "..", "stop");
      const reader = start(join(FIXTURES, "reader.mjs"), [root, "mix", "reader", stop]);
      const posters = [
        ...[1, 2, 3].map((n) =>
          runReferenceScript(ref, join(FIXTURES, "reference-poster.py"), [
            root,
            "mix",
            `py-${n}`,
            "40",
            "4096",
          ]),
        ),
        ...[1, 2, 3].map((n) => runFixture("poster.mjs", [root, "mix", `caesar-${n}`, "40", "4096"])),
      ];
      const results = await Promise.all(posters);
      for (const result of results) expect(result.stderr).toBe("");
      writeFileSync(stop, "");
      const read = await reader.done;
      expect(read.stderr).toBe("");

      const seqs = readdirSync(join(root, "mix"))
        .filter((name) => /^\d+-/.test(name))
        .map((name) => Number(name.split("-")[0]))
        .sort((a, b) => a - b);
      expect(seqs).toEqual(Array.from({ length: 240 }, (_, index) => index + 1));
      const summary = JSON.parse(read.stdout) as { delivered: number[]; problems: string[] };
      expect(summary.problems).toEqual([]);
      expect(summary.delivered).toEqual(Array.from({ length: 240 }, (_, index) => index + 1));
      // chat.py reads caesar's files as whole messages too.
      const pyRead = await py(root, ["read", "mix", "--as", "auditor"]);
      expect(pyRead.stdout.match(/^seq: \d+$/gm)).toHaveLength(240);
    }, 300_000);
  });

  describe("interop with the reference chat.py: caesar posters killed while chat.py posts", () => {
    it("SIGKILLs of caesar posters (some while they hold _seq.lock): every chat.py post goes through, sequences 1..N, every file whole", async () => {
      const root = makeChatRoot();
      await py(root, ["init", "kills"]);
      const dir = join(root, "kills");
      // A caesar poster killed holding the lock has it taken over at once by the next caesar post (its
      // holder is recorded and gone); one killed between its mkdir and its record leaves a lock without
      // holder, taken over after this stale period — well within chat.py's 10 s wait.
      const env = { CAESAR_CHAT_LOCK_STALE_MS: "3000" };
      const references = [1, 2, 3].map((n) =>
        runReferenceScript(ref, join(FIXTURES, "reference-poster.py"), [
          root,
          "kills",
          `py-${n}`,
          "60",
          "512",
        ]),
      );
      let referencesDone = false;
      void Promise.all(references).then(() => {
        referencesDone = true;
      });
      let started = 0;
      const launch = () =>
        start(join(FIXTURES, "poster.mjs"), [root, "kills", `caesar-${++started}`, "100000", "512"], env);
      const posters = Array.from({ length: 3 }, launch);
      for (let kill = 0; kill < 40 && !referencesDone; kill++) {
        await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200));
        const victim = Math.floor(Math.random() * posters.length);
        posters[victim]!.child.kill("SIGKILL");
        await posters[victim]!.done;
        posters[victim] = launch();
      }
      for (const result of await Promise.all(references)) {
        expect(result.stderr).toBe("");
        expect(result.code).toBe(0);
      }
      for (const poster of posters) poster.child.kill("SIGKILL");
      await Promise.all(posters.map((poster) => poster.done));
      const last = await caesarJson<{ seq: number }>(root, [
        "post",
        "kills",
        "--from",
        "last",
        "--title",
        "end",
      ]);

      const files = readdirSync(dir).filter((name) => /^\d+-/.test(name));
      const seqs = files.map((name) => Number(name.split("-")[0])).sort((a, b) => a - b);
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, index) => index + 1));
      expect(last.seq).toBe(seqs.length);
      expect(files.filter((name) => /^\d+-py-\d-/.test(name))).toHaveLength(180);
      for (const file of files) {
        const text = readFileSync(join(dir, file), "utf8");
        if (!file.includes("-last-")) expect(text, file).toMatch(/\nend (py|caesar)-\d+ #\d+ \d+\n$/);
      }
      // No lock, record or temp file left.
      expect(
        readdirSync(dir)
          .filter((name) => !/^\d+-/.test(name))
          .sort(),
      ).toEqual([".cursors", "_meta.json"]);
    }, 300_000);
  });

  describe("interop with the reference chat.py: a lock left by a killed caesar poster", () => {
    it("chat.py takes it once 30 s old (an empty directory: its rmdir works), and caesar is not misled by the record left beside it", async () => {
      const root = makeChatRoot();
      await caesar(root, ["init", "crash"]);
      const dir = join(root, "crash");
      const holder = start(join(FIXTURES, "hold-lock.mjs"), [dir]);
      await until(() => holder.stdout().includes("held"), "the lock holder");
      holder.child.kill("SIGKILL");
      await holder.done;
      expect(readdirSync(join(dir, "_seq.lock"))).toEqual([]);
      // As if no caesar had posted for 30 s: chat.py's stale rule is the lock's mtime.
      const past = new Date(Date.now() - 31_000);
      utimesSync(join(dir, "_seq.lock"), past, past);
      const posted = await py(root, ["post", "crash", "--from", "py", "--title", "after", "--body", "x"]);
      expect(posted.code, posted.stderr).toBe(0);
      expect(posted.stdout).toContain("posted #1");
      // chat.py removed the lock it took; the killed poster's record stays, naming a lock that is gone.
      expect(readdirSync(dir).filter((name) => name.startsWith("_seq.lock"))).toEqual(["_seq.lock.owner"]);
      const next = await caesarJson<{ seq: number }>(root, [
        "post",
        "crash",
        "--from",
        "caesar",
        "--title",
        "next",
      ]);
      expect(next.seq).toBe(2);
      expect(readdirSync(dir).filter((name) => name.startsWith("_seq.lock"))).toEqual([]);
    }, 120_000);
  });

  describe("interop with the reference chat.py: governance profile", () => {
    it("a governed channel made by caesar: chat.py reads it; the maintainer's decision counts whoever's tool wrote it", async () => {
      const root = makeChatRoot();
      await caesar(root, [
        "init",
        "release",
        "--members",
        "alice,bob",
        "--maintainer",
        "mia",
        "--band",
        "merge=approval-required",
      ]);
      expect((await py(root, ["roster", "release"])).stdout).toContain("members : alice, bob");

      const request = await caesarJson<{ seq: number; status: string }>(root, [
        "post",
        "release",
        "--from",
        "alice",
        "--title",
        "Merge feature x",
        "--action",
        "merge",
      ]);
      expect(request.status).toBe("needs-approval");
      const seen = await py(root, ["read", "release", "--as", "mia"]);
      expect(seen.stdout).toContain("status: needs-approval");
      expect(seen.stdout).toContain("action: merge");

      // A chat.py user who is not the maintainer writes "approved": it changes nothing.
      await py(root, [
        "post",
        "release",
        "--from",
        "bob",
        "--to",
        "alice",
        "--reply",
        "1",
        "--status",
        "approved",
        "--title",
        "lgtm",
        "--body",
        "looks good to me",
      ]);
      const ctx = makeChatContext({ root, env: {} });
      expect((await getApprovalStatus(ctx, "release", 1)).state).toBe("pending");

      // The maintainer approves with chat.py; caesar counts it, and alice (waiting in chat.py) wakes on caesar's approve.
      await py(root, [
        "post",
        "release",
        "--from",
        "mia",
        "--to",
        "alice",
        "--reply",
        "1",
        "--status",
        "approved",
        "--title",
        "ok",
        "--body",
        "approved",
      ]);
      expect(await getApprovalStatus(ctx, "release", 1)).toMatchObject({ state: "approved", decided_in: 3 });

      await caesar(root, [
        "post",
        "release",
        "--from",
        "alice",
        "--title",
        "Merge feature y",
        "--action",
        "merge",
      ]);
      await py(root, ["read", "release", "--as", "alice"]);
      const waiter = startReference(ref, root, [
        "wait",
        "release",
        "--as",
        "alice",
        "--timeout",
        "90",
        "--interval",
        "0.1",
      ]);
      const approve = await caesar(root, ["approve", "release", "4", "--as", "mia", "--note", "ship it"]);
      expect(approve.code).toBe(0);
      const woke = await waiter.done;
      expect(woke.code).toBe(0);
      expect(woke.stdout).toContain("status: approved");
      expect(woke.stdout).toContain("reply_to: 4");
      expect(woke.stdout).toContain("ship it");
      // A dozen processes of two interpreters, one after the other: generous on a loaded 2-core machine.
    }, 180_000);
  });
}
