import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { chat, makeChatRoot } from "./helpers.js";

type ErrorBody = { error: { code: string; summary: string; detail: string } };

describe("caesar chat, as a user meets it", () => {
  it("init, post, read, then nothing new: the files are the spec's", async () => {
    const root = makeChatRoot();
    const init = await chat(root, ["init", "review", "--members", "alice,bob", "--topic", "Schema review"]);
    expect(init.code).toBe(0);
    expect(init.stdout).toContain("Created channel review");
    const meta = JSON.parse(readFileSync(join(root, "review", "_meta.json"), "utf8"));
    expect(meta).toMatchObject({ channel: "review", members: ["alice", "bob"], topic: "Schema review" });
    expect(meta.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);

    const post = await chat(
      root,
      ["post", "review", "--from", "alice", "--to", "bob", "--title", "Converge schema v0.2"],
      {
        input: "Please look at `to`.\n",
      },
    );
    expect(post.code).toBe(0);
    expect(post.stdout).toContain("Posted #1 to review (0001-alice-converge-schema-v0-2.md)");
    const text = readFileSync(join(root, "review", "0001-alice-converge-schema-v0-2.md"), "utf8");
    expect(text).toMatch(
      /^---\nseq: 1\nfrom: alice\nto: bob\nchannel: review\nts: \S+[+-]\d\d:\d\d\nstatus: discussion\ntitle: Converge schema v0.2\n---\nPlease look at `to`.\n$/,
    );

    const read = await chat(root, ["read", "review", "--as", "bob"]);
    expect(read.code).toBe(0);
    expect(read.stdout).toContain("#1 alice -> bob: Converge schema v0.2");
    expect(read.stdout).toContain("Please look at `to`.");
    expect(readFileSync(join(root, "review", ".cursors", "bob.txt"), "utf8")).toBe("1");

    const again = await chat(root, ["read", "review", "--as", "bob"]);
    expect(again.stdout).toContain("No new messages for bob in review.");
  });

  it("post takes the body from --body, --body-file or stdin, and replies carry reply_to", async () => {
    const root = makeChatRoot();
    await chat(root, ["init", "c"]);
    const file = join(root, "..", "body.md");
    writeFileSync(file, "# From a file\n\n- item\n");
    await chat(root, ["post", "c", "--from", "a", "--title", "one", "--body", "inline body"]);
    await chat(root, ["post", "c", "--from", "a", "--title", "two", "--body-file", file]);
    await chat(root, ["post", "c", "--from", "b", "--title", "three", "--reply", "1", "--status", "ack"], {
      input: "piped body",
    });
    const read = parseJsonOutput<{
      messages: { seq: number; body: string; reply_to?: number; status: string }[];
    }>(await chat(root, ["read", "c", "--as", "z", "--json"]));
    expect(read.messages.map((message) => message.body)).toEqual([
      "inline body\n",
      "# From a file\n\n- item\n",
      "piped body\n",
    ]);
    expect(read.messages[2]).toMatchObject({ reply_to: 1, status: "ack" });

    const both = await chat(root, [
      "post",
      "c",
      "--from",
      "a",
      "--title",
      "x",
      "--body",
      "b",
      "--body-file",
      file,
      "--json",
    ]);
    expect(both.code).toBe(2);
  });

  it("--json everywhere: one JSON document on stdout", async () => {
    const root = makeChatRoot();
    for (const args of [
      ["init", "j", "--members", "a,b"],
      ["post", "j", "--from", "a", "--title", "hello"],
      ["read", "j", "--as", "b"],
      ["peek", "j"],
      ["channels"],
      ["roster", "j"],
      ["task", "j", "task-1", "--from", "a"],
      ["claim", "j", "task-1", "--as", "a"],
    ]) {
      const result = await chat(root, [...args, "--json"]);
      expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(0);
      expect(() => JSON.parse(result.stdout)).not.toThrow();
    }
  });

  it("read delivers only what concerns the reader, and moves its cursor past the rest", async () => {
    const root = makeChatRoot();
    await chat(root, ["init", "team"]);
    await chat(root, ["post", "team", "--from", "alice", "--title", "to everyone"]);
    await chat(root, ["post", "team", "--from", "alice", "--to", "carol", "--title", "to carol"]);
    await chat(root, ["post", "team", "--from", "bob", "--title", "bob's own"]);
    await chat(root, ["post", "team", "--from", "alice", "--to", "bob,carol", "--title", "to bob and carol"]);
    const read = parseJsonOutput<{
      messages: { title: string }[];
      cursor: { before: number; after: number };
    }>(await chat(root, ["read", "team", "--as", "bob", "--json"]));
    expect(read.messages.map((message) => message.title)).toEqual(["to everyone", "to bob and carol"]);
    expect(read.cursor).toEqual({ before: 0, after: 4 });

    const all = parseJsonOutput<{ messages: { title: string }[] }>(
      await chat(root, ["read", "team", "--as", "carol", "--all", "--peek", "--json"]),
    );
    expect(all.messages).toHaveLength(4);
    const carol = parseJsonOutput<{ messages: { title: string }[] }>(
      await chat(root, ["read", "team", "--as", "carol", "--json"]),
    );
    expect(carol.messages.map((message) => message.title)).toEqual([
      "to everyone",
      "to carol",
      "bob's own",
      "to bob and carol",
    ]);
  });

  it("peek shows the last messages without touching cursors", async () => {
    const root = makeChatRoot();
    await chat(root, ["init", "p"]);
    for (const n of [1, 2, 3]) await chat(root, ["post", "p", "--from", "a", "--title", `message ${n}`]);
    const peek = parseJsonOutput<{ messages: { seq: number }[] }>(
      await chat(root, ["peek", "p", "-n", "2", "--json"]),
    );
    expect(peek.messages.map((message) => message.seq)).toEqual([2, 3]);
    expect(readdirSync(join(root, "p", ".cursors"))).toEqual([]);
    const none = await chat(root, ["peek", "p", "-n", "0"]);
    expect(none).toMatchObject({ code: 0, stdout: "" });
  });

  it("wait times out with exit 2 and {timed_out: true}; a usage error also exits 2 but prints an error code", async () => {
    const root = makeChatRoot();
    await chat(root, ["init", "quiet"]);
    const waited = await chat(root, ["wait", "quiet", "--as", "bob", "--timeout", "0.3", "--json"]);
    expect(waited.code).toBe(2);
    expect(parseJsonOutput<{ timed_out: boolean }>(waited).timed_out).toBe(true);
    const human = await chat(root, ["wait", "quiet", "--as", "bob", "--timeout", "0.2"]);
    expect(human.code).toBe(2);
    expect(human.stdout).toBe("");
    expect(human.stderr).toContain("No new message for bob in quiet after");

    const usage = await chat(root, ["wait", "quiet", "--as", "bob", "--timeout", "soon", "--json"]);
    expect(usage.code).toBe(2);
    expect(parseJsonOutput<ErrorBody>(usage).error.code).toBe("invalid_argument");
  });

  it("wait returns at once when a message is already there", async () => {
    const root = makeChatRoot();
    await chat(root, ["init", "w"]);
    await chat(root, ["post", "w", "--from", "alice", "--title", "waiting for you"]);
    const result = await chat(root, ["wait", "w", "--as", "bob", "--timeout", "60"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("waiting for you");
  });

  it("claim: the second claimer exits 3 with the holder's name; the holder cannot claim again", async () => {
    const root = makeChatRoot();
    await chat(root, ["init", "t"]);
    expect((await chat(root, ["task", "t", "fix-login", "--from", "carol"])).stdout).toContain(
      "Opened task-fix-login.md in t",
    );
    const first = await chat(root, ["claim", "t", "fix-login", "--as", "bob"]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("bob claimed task-fix-login.md in t");
    const second = await chat(root, ["claim", "t", "fix-login", "--as", "alice"]);
    expect(second.code).toBe(3);
    expect(second.stderr).toContain("already claimed by bob");
    const again = await chat(root, ["claim", "t", "fix-login", "--as", "bob", "--json"]);
    expect(again.code).toBe(3);
    expect(parseJsonOutput<{ reason: string }>(again).reason).toBe("claimed");
    const roster = await chat(root, ["roster", "t"]);
    expect(roster.stdout).toContain("claim: task-fix-login.md by bob");
  });

  it("expected failures print one clear message, never a stack trace", async () => {
    const root = makeChatRoot();
    const missing = await chat(root, ["read", "nowhere", "--as", "bob"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('caesar: No channel "nowhere"');
    expect(missing.stderr).toContain("caesar chat init nowhere");
    expect(missing.stderr).not.toMatch(/\n\s+at /);

    await chat(root, ["init", "x"]);
    const exists = await chat(root, ["init", "x", "--json"]);
    expect(exists.code).toBe(1);
    expect(parseJsonOutput<ErrorBody>(exists).error.code).toBe("channel_exists");

    const noTitle = await chat(root, ["post", "x", "--from", "a", "--title", "  ", "--json"]);
    expect(parseJsonOutput<ErrorBody>(noTitle).error.code).toBe("invalid_argument");
  });

  it("a file system in the way is a clear error, not a bug report", async () => {
    const file = join(makeChatRoot(), "..", "not-a-folder");
    writeFileSync(file, "");
    const result = await chat(file, ["init", "x", "--json"]);
    expect(result.code).toBe(1);
    expect(parseJsonOutput<ErrorBody>(result).error).toMatchObject({
      code: "file_system_error",
      detail: expect.stringContaining("chat root"),
    });
  });

  it("refuses names that would leave the root or not survive a frontmatter line; takes chat.py's others", async () => {
    const root = makeChatRoot();
    await chat(root, ["init", "safe"]);
    for (const args of [
      ["init", "../escape"],
      ["init", ".hidden"],
      ["init", "_internal"],
      ["post", "safe", "--from", "a,b", "--title", "t"],
      ["post", "safe", "--from", "a", "--to", "bob\nfrom: eve", "--title", "t"],
      ["read", "safe", "--as", "all"],
      ["read", "../safe", "--as", "a"],
    ]) {
      const result = await chat(root, [...args, "--json"]);
      expect(result.code, args.join(" ")).toBe(2);
      expect(parseJsonOutput<ErrorBody>(result).error.code).toBe("invalid_name");
    }
    const task = await chat(root, ["claim", "safe", "../../outside", "--as", "a", "--json"]);
    expect(parseJsonOutput<ErrorBody>(task).error.code).toBe("invalid_task");
    expect(readdirSync(join(root, ".."))).toEqual(["root"]);

    // What chat.py accepts, caesar accepts: a capitalised channel, a capitalised agent.
    expect((await chat(root, ["init", "Review"])).code).toBe(0);
    expect(
      (await chat(root, ["post", "Review", "--from", "Alice", "--to", "Bob", "--title", "hi"])).code,
    ).toBe(0);
    const read = parseJsonOutput<{ messages: { from: string }[] }>(
      await chat(root, ["read", "Review", "--as", "Bob", "--json"]),
    );
    expect(read.messages.map((message) => message.from)).toEqual(["Alice"]);
    const channels = parseJsonOutput<{ channels: { channel: string }[] }>(
      await chat(root, ["channels", "--json"]),
    );
    expect(channels.channels.map((channel) => channel.channel)).toEqual(["Review", "safe"]);
  });

  it("finds the root in --root, then $AGENT_CHAT_ROOT", async () => {
    const root = makeChatRoot();
    const init = await runCaesar(["chat", "init", "envy"], { env: { AGENT_CHAT_ROOT: root } });
    expect(init.code).toBe(0);
    const channels = parseJsonOutput<{ root: string; channels: { channel: string }[] }>(
      await runCaesar(["chat", "channels", "--json"], { env: { AGENT_CHAT_ROOT: root } }),
    );
    expect(channels.root).toBe(root);
    expect(channels.channels.map((channel) => channel.channel)).toEqual(["envy"]);
    const other = makeChatRoot();
    const explicit = parseJsonOutput<{ root: string; channels: unknown[] }>(
      await runCaesar(["chat", "channels", "--root", other, "--json"], { env: { AGENT_CHAT_ROOT: root } }),
    );
    expect(explicit).toEqual({ root: other, channels: [] });
  });

  it("points at the project's .caesar/chat when a channel is only there", async () => {
    const project = join(makeChatRoot(), "..", "project");
    mkdirSync(join(project, ".caesar", "chat"), { recursive: true });
    await chat(join(project, ".caesar", "chat"), ["init", "agents"]);
    const home = join(project, "..", "home");
    const result = await runCaesar(["chat", "read", "agents", "--as", "me"], {
      cwd: project,
      env: { AGENT_CHAT_ROOT: "", HOME: home },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`--root ${join(project, ".caesar", "chat")}`);
  });

  it("lists chat among the commands, with its exit codes documented", async () => {
    const help = await runCaesar(["chat", "--help"]);
    expect(help.stdout).toContain("approve");
    expect(help.stdout).toContain("3  lost claim");
    expect(help.stdout).toContain("2  wait timed out");
  });
});
