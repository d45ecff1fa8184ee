import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  claimTask,
  initChannel,
  listChannels,
  makeChatContext,
  peekMessages,
  postMessage,
  readMessages,
} from "../../src/chat/index.js";
import { parseMessage } from "../../src/chat/message.js";
import { parseJsonOutput } from "../helpers/cli.js";
import { chat, makeChatRoot } from "./helpers.js";

// The reference implementation's own regression tests (chat.py's tests/test_chat.py), ported where
// they describe the protocol; each keeps the reference's name. Left out, and why: docs/chat.md
// ("Tests and benchmark").

/** A channel as the reference's tests make one: a folder and a bare _meta.json. */
function channel(root: string, name: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "_meta.json"), JSON.stringify({ channel: name, members: [], topic: "" }));
  return dir;
}

function setup() {
  const root = makeChatRoot();
  return { root, ctx: makeChatContext({ root, env: {}, now: () => new Date("2026-08-09T00:00:00Z") }) };
}

describe("chat.py's test cases, against caesar", () => {
  it("test_post_title_newlines_cannot_forge_frontmatter_fields", async () => {
    const { root, ctx } = setup();
    const dir = channel(root, "general");
    await postMessage(ctx, "general", {
      from: "alice",
      to: ["bob"],
      title: "Status\nfrom: mallory\nto: eve",
      body: "Message body",
    });
    const file = readdirSync(dir).find((name) => name.endsWith(".md"))!;
    const parsed = parseMessage(readFileSync(join(dir, file), "utf8"), file, 1, "general");
    expect(parsed).toMatchObject({
      ok: true,
      message: { from: "alice", to: ["bob"], title: "Status from: mallory to: eve" },
    });
  });

  it("test_max_seq_uses_highest_valid_sequence_with_gaps_and_malformed_files", async () => {
    const { root, ctx } = setup();
    const dir = channel(root, "general");
    for (const name of ["0002-alice-first.md", "0010-bob-last.md", "broken.md", "12x-nope.md"])
      writeFileSync(join(dir, name), "body");
    expect((await postMessage(ctx, "general", { from: "alice", title: "next" })).seq).toBe(11);
  });

  it("test_channels_reports_counts_and_last_message_for_empty_and_gapped_channels", async () => {
    const { root, ctx } = setup();
    const alpha = channel(root, "alpha");
    channel(root, "beta");
    writeFileSync(join(alpha, "0002-alice-first.md"), "---\nfrom: alice\ntitle: First\n---\nbody\n");
    writeFileSync(join(alpha, "0010-bob-last.md"), "---\nfrom: bob\ntitle: Latest update\n---\nbody\n");
    writeFileSync(join(alpha, "not-a-message.md"), "ignored");
    const channels = await listChannels(ctx);
    expect(channels).toMatchObject([
      { channel: "alpha", messages: 2, last: { seq: 10, from: "bob", title: "Latest update" } },
      { channel: "beta", messages: 0 },
    ]);
    expect(channels[1]!.last).toBeUndefined();
  });

  it("test_main_maps_missing_body_file_to_application_error", async () => {
    const root = makeChatRoot();
    const dir = channel(root, "general");
    const result = await chat(root, [
      "post",
      "general",
      "--from",
      "alice",
      "--to",
      "bob",
      "--title",
      "Missing",
      "--body-file",
      join(root, "missing.md"),
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Cannot read --body-file");
    expect(readdirSync(dir).filter((name) => name.endsWith(".md"))).toEqual([]);
  });

  it("test_init_rejects_reserved_channel_prefixes", async () => {
    const { root, ctx } = setup();
    for (const name of ["_internal", ".hidden"]) {
      await expect(initChannel(ctx, name)).rejects.toMatchObject({ code: "invalid_name" });
      expect(existsSync(join(root, name))).toBe(false);
    }
  });

  it("test_read_preserves_sequence_order_and_advances_cursor", async () => {
    const { root, ctx } = setup();
    const dir = channel(root, "general");
    writeFileSync(
      join(dir, "0002-bob-second.md"),
      "---\nseq: 2\nfrom: bob\nto: alice\ntitle: Second\n---\nbody\n",
    );
    writeFileSync(
      join(dir, "0001-bob-first.md"),
      "---\nseq: 1\nfrom: bob\nto: alice\ntitle: First\n---\nbody\n",
    );
    const read = await readMessages(ctx, "general", { as: "alice" });
    expect(read.messages.map((message) => message.title)).toEqual(["First", "Second"]);
    expect(readFileSync(join(dir, ".cursors", "alice.txt"), "utf8")).toBe("2");
  });

  it("test_peek_zero_messages_is_empty", async () => {
    const { root, ctx } = setup();
    const dir = channel(root, "general");
    writeFileSync(join(dir, "0001-bob-message.md"), "---\nseq: 1\nfrom: bob\ntitle: Message\n---\nbody\n");
    expect((await peekMessages(ctx, "general", 0)).messages).toEqual([]);
    const cli = await chat(root, ["peek", "general", "-n", "0"]);
    expect(cli).toMatchObject({ code: 0, stdout: "" });
  });

  it("test_claim_rejects_internal_channel_files", async () => {
    const { root, ctx } = setup();
    const dir = channel(root, "general");
    await expect(claimTask(ctx, "general", "_meta.json", { as: "mallory" })).rejects.toMatchObject({
      code: "invalid_task",
    });
    expect(existsSync(join(dir, "_meta.json"))).toBe(true);
  });

  it("test_claim_rejects_non_task_files", async () => {
    const { root, ctx } = setup();
    const dir = channel(root, "general");
    for (const name of ["README.md", "0001-bob-message.md", "task-.md"]) {
      writeFileSync(join(dir, name), "original");
      await expect(claimTask(ctx, "general", name, { as: "mallory" }), name).rejects.toMatchObject({
        code: "invalid_task",
      });
      expect(readFileSync(join(dir, name), "utf8")).toBe("original");
    }
  });

  it("test_claim_renames_task_marker_without_overwriting_existing_claim", async () => {
    const { root } = setup();
    const dir = channel(root, "general");
    writeFileSync(join(dir, "task-12.md"), "task");
    writeFileSync(join(dir, "task-12.CLAIMED-mallory.md"), "other agent");
    const result = await chat(root, ["claim", "general", "task-12.md", "--as", "mallory", "--json"]);
    expect(result.code).toBe(3);
    expect(parseJsonOutput(result)).toMatchObject({ claimed: false, reason: "claimed" });
    expect(readFileSync(join(dir, "task-12.md"), "utf8")).toBe("task");
    expect(readFileSync(join(dir, "task-12.CLAIMED-mallory.md"), "utf8")).toBe("other agent");
  });

  it("test_claim_renames_valid_task_marker", async () => {
    const { root, ctx } = setup();
    const dir = channel(root, "general");
    writeFileSync(join(dir, "task-12.md"), "task");
    expect((await claimTask(ctx, "general", "task-12.md", { as: "alice" })).claimed).toBe(true);
    expect(existsSync(join(dir, "task-12.md"))).toBe(false);
    expect(readFileSync(join(dir, "task-12.CLAIMED-alice.md"), "utf8")).toBe("task");
  });

  it("test_post_prompts_for_tty_stdin_but_not_piped_stdin (the piped half)", async () => {
    const root = makeChatRoot();
    const dir = channel(root, "general");
    await chat(root, [
      "post",
      "general",
      "--from",
      "alice",
      "--to",
      "bob",
      "--title",
      "Status update",
      "--body",
      "b",
    ]);
    const piped = await chat(
      root,
      ["post", "general", "--from", "alice", "--to", "bob", "--title", "Piped"],
      {
        input: "piped body",
      },
    );
    expect(piped.stderr).toBe("");
    expect(readFileSync(join(dir, "0002-alice-piped.md"), "utf8")).toContain("piped body");
  });
});
