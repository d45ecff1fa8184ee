import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { type ChatContext, initChannel, makeChatContext, postMessage } from "../../src/chat/index.js";
import { registerChatTools } from "../../src/mcp/chat-tools.js";
import { makeChatRoot } from "./helpers.js";

async function connect(ctx: ChatContext, agent?: string): Promise<Client> {
  const server = new McpServer({ name: "caesar-test", version: "0.0.0" });
  registerChatTools(server, { context: ctx, intervalMs: 50, ...(agent === undefined ? {} : { agent }) });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: "test-client", version: "0.0.0" });
  await client.connect(clientTransport);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
  // biome-ignore lint/suspicious/noExplicitAny: the tests read structured results loosely
  return { isError: result.isError === true, text, data: result.structuredContent as Record<string, any> };
}

async function setup(agent?: string) {
  const ctx = makeChatContext({ root: makeChatRoot(), env: {} });
  await initChannel(ctx, "team", { members: ["alice", "bob"], topic: "the team" });
  return { ctx, client: await connect(ctx, agent) };
}

describe("MCP chat tools", () => {
  it("lists the six tools, each with a description for a model", async () => {
    const { client } = await setup();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      "caesar_chat_channels",
      "caesar_chat_claim",
      "caesar_chat_post",
      "caesar_chat_read",
      "caesar_chat_task",
      "caesar_chat_wait",
    ]);
    for (const tool of tools) expect(tool.description!.length).toBeGreaterThan(120);
    const post = tools.find((tool) => tool.name === "caesar_chat_post")!;
    expect(post.inputSchema.required).toEqual(["channel", "title"]);
  });

  it("post, channels, read: a conversation between two agents", async () => {
    const { client } = await setup();
    const posted = await call(client, "caesar_chat_post", {
      channel: "team",
      from: "alice",
      to: "bob",
      title: "Can you take the login test?",
      body: "It fails on CI.",
    });
    expect(posted.isError).toBe(false);
    expect(posted.data).toMatchObject({ seq: 1, to: ["bob"] });

    const channels = await call(client, "caesar_chat_channels", { as: "bob" });
    expect(channels.data.channels).toMatchObject([{ channel: "team", topic: "the team", unread: 1 }]);

    const read = await call(client, "caesar_chat_read", { channel: "team", as: "bob" });
    expect(read.data.messages).toMatchObject([
      { seq: 1, from: "alice", title: "Can you take the login test?" },
    ]);
    expect((await call(client, "caesar_chat_read", { channel: "team", as: "bob" })).data.messages).toEqual(
      [],
    );
  });

  it("wait returns the next message for the caller, or timed_out", async () => {
    const { ctx, client } = await setup();
    const quiet = await call(client, "caesar_chat_wait", { channel: "team", as: "bob", timeout_s: 0.2 });
    expect(quiet.isError).toBe(false);
    expect(quiet.data).toMatchObject({ timed_out: true });

    const waiting = call(client, "caesar_chat_wait", { channel: "team", as: "bob", timeout_s: 60 });
    await postMessage(ctx, "team", { from: "alice", to: ["bob"], title: "done?" });
    const woke = await waiting;
    expect(woke.data).toMatchObject({ timed_out: false, messages: [{ title: "done?" }] });
  });

  it("wait reports progress while it sleeps, for clients that reset their timeout on progress", async () => {
    const { ctx, client } = await setup();
    const progress: number[] = [];
    const waiting = client.callTool(
      { name: "caesar_chat_wait", arguments: { channel: "team", as: "bob", timeout_s: 60 } },
      undefined,
      {
        onprogress: (update) => {
          progress.push(update.progress);
          if (progress.length === 2) void postMessage(ctx, "team", { from: "alice", title: "now" });
        },
        resetTimeoutOnProgress: true,
      },
    );
    const result = (await waiting) as CallToolResult;
    expect(result.structuredContent).toMatchObject({ timed_out: false, messages: [{ title: "now" }] });
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
  });

  it("claim: one winner, and the loser gets a claim_lost error naming the holder", async () => {
    const { client } = await setup();
    const opened = await call(client, "caesar_chat_task", {
      channel: "team",
      task: "login-test",
      from: "dan",
    });
    expect(opened.data).toMatchObject({ marker: "task-login-test.md" });
    const missing = await call(client, "caesar_chat_claim", {
      channel: "team",
      marker: "nothing",
      as: "bob",
    });
    expect(missing.text).toContain("claim_lost: there is no task-nothing.md");
    const results = await Promise.all(
      ["alice", "bob", "carol"].map((as) =>
        call(client, "caesar_chat_claim", { channel: "team", marker: "login-test", as }),
      ),
    );
    const winners = results.filter((result) => !result.isError);
    expect(winners).toHaveLength(1);
    const holder = winners[0]!.data.holder.agent as string;
    for (const loser of results.filter((result) => result.isError)) {
      expect(loser.text).toContain(`claim_lost: task-login-test.md is already claimed by ${holder}`);
      expect(loser.data).toMatchObject({ claimed: false });
    }
  });

  it("with a fixed agent (the per-task return channel), names are implied and cannot be borrowed", async () => {
    const { client } = await setup("bob");
    const posted = await call(client, "caesar_chat_post", { channel: "team", title: "hello from bob" });
    expect(posted.data.from).toBe("bob");
    const spoof = await call(client, "caesar_chat_post", { channel: "team", title: "x", from: "alice" });
    expect(spoof.isError).toBe(true);
    expect(spoof.text).toContain("identity_mismatch");
    await call(client, "caesar_chat_task", { channel: "team", task: "t1" });
    expect(
      (await call(client, "caesar_chat_claim", { channel: "team", marker: "t1" })).data.holder.agent,
    ).toBe("bob");
  });

  it("errors are clear text the model can act on, never a crash", async () => {
    const { client } = await setup();
    const noName = await call(client, "caesar_chat_read", { channel: "team" });
    expect(noName).toMatchObject({ isError: true, text: expect.stringContaining("identity_missing") });
    const missing = await call(client, "caesar_chat_read", { channel: "nope", as: "bob" });
    expect(missing.text).toContain('channel_not_found: No channel "nope"');
    const traversal = await call(client, "caesar_chat_claim", { channel: "team", marker: "../x", as: "bob" });
    expect(traversal.text).toContain("invalid_task");
    const badArgs = (await client.callTool({
      name: "caesar_chat_post",
      arguments: { channel: "team" },
    })) as CallToolResult;
    expect(badArgs.isError).toBe(true);
  });
});
