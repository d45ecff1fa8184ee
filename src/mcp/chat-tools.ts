import type { McpServer, RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
  type ChatContext,
  claimTask,
  listChannels,
  makeChatContext,
  openTask,
  postMessage,
  readMessages,
  waitForMessages,
} from "../chat/index.js";
import { CaesarError, isCaesarError, messageOf } from "../support/errors.js";
import * as z from "../support/zod.js";

export interface ChatToolsOptions {
  /** Where the channels are (default: `$AGENT_CHAT_ROOT`, else `~/agent-chat`), read at each call. */
  context?: ChatContext | (() => ChatContext);
  /**
   * The agent the tools act for. When set (the per-task return channel), `as`/`from` may be omitted
   * and may not name anyone else; when unset (`caesar mcp serve`), the caller must name itself.
   */
  agent?: string;
  /** Upper bound of `timeout_s` in caesar_chat_wait (default 600). */
  maxWaitSeconds?: number;
  /** Rescan (and progress report) period of caesar_chat_wait, in ms (default 2000). */
  intervalMs?: number;
}

const DEFAULT_WAIT_S = 45;
const channel = z.string().describe("Channel name, e.g. `review` (caesar_chat_channels lists them).");
const recipients = z
  .union([z.array(z.string()), z.string()])
  .optional()
  .describe("Agent name(s) the message is for; omit (or `all`) for everyone in the channel.");

/**
 * Register the agent-chat tools on an MCP server: caesar_chat_channels, caesar_chat_post,
 * caesar_chat_read, caesar_chat_wait, caesar_chat_task, caesar_chat_claim. Their descriptions are written for a model.
 */
export function registerChatTools(server: McpServer, options: ChatToolsOptions = {}): RegisteredTool[] {
  const contextOf = () =>
    typeof options.context === "function" ? options.context() : (options.context ?? makeChatContext());
  const identity = (given: string | undefined, field: "as" | "from"): string => {
    if (options.agent !== undefined && given !== undefined && given !== options.agent)
      throw new CaesarError(
        "identity_mismatch",
        `You act as ${options.agent} here; \`${field}\` cannot be ${given}.`,
        {
          detail: `Omit \`${field}\`: this server posts and reads as ${options.agent}.`,
        },
      );
    const agent = given ?? options.agent;
    if (agent === undefined)
      throw new CaesarError("identity_missing", `Say who you are: pass \`${field}\` (your agent name).`, {
        detail: "Use the same name in every call, e.g. `claude-1`.",
      });
    return agent;
  };
  const you = options.agent === undefined ? "Your agent name (required)." : `Defaults to ${options.agent}.`;
  const maxWait = options.maxWaitSeconds ?? 600;

  return [
    server.registerTool(
      "caesar_chat_channels",
      {
        title: "List chat channels",
        description:
          "List the agent-chat channels where agents working in parallel coordinate. Returns each channel's name, topic, declared members, message count and last message; with `as`, also how many unread messages are for you. Call it to find the channel you were told to use, or to see where others talk.",
        inputSchema: { as: z.string().optional().describe(`Count unread messages for this agent. ${you}`) },
        annotations: { readOnlyHint: true },
      },
      async (args) =>
        run(async () => {
          const as = args.as ?? options.agent;
          const ctx = contextOf();
          return { root: ctx.root, channels: await listChannels(ctx, as === undefined ? {} : { as }) };
        }),
    ),
    server.registerTool(
      "caesar_chat_post",
      {
        title: "Post a chat message",
        description:
          "Post a message to a channel so the other agents see it: a status update, a question, a proposal, a handoff, an answer. Address it with `to` (omit for everyone); answer a message by giving its number in `reply_to`. Returns the new message's sequence number (`seq`). Messages are permanent: to correct one, post another. In a governed channel, pass `action` (e.g. `merge`) before an irreversible step; the result's `governance.next` says whether to wait for the maintainer's approval.",
        inputSchema: {
          channel,
          title: z.string().describe("One-line summary."),
          body: z.string().optional().describe("Markdown body."),
          to: recipients,
          reply_to: z
            .number()
            .int()
            .positive()
            .optional()
            .describe("Sequence number of the message this answers."),
          status: z
            .string()
            .optional()
            .describe("Free label: discussion (default), question, proposal, ack, done, needs-approval ..."),
          action: z
            .string()
            .optional()
            .describe("Governance: the action this asks about (merge, deploy, delete ...)."),
          from: z.string().optional().describe(`Who posts. ${you}`),
        },
      },
      async (args) =>
        run(() =>
          postMessage(contextOf(), args.channel, {
            from: identity(args.from, "from"),
            title: args.title,
            body: args.body ?? "",
            ...(args.to === undefined ? {} : { to: typeof args.to === "string" ? [args.to] : args.to }),
            ...(args.reply_to === undefined ? {} : { replyTo: args.reply_to }),
            ...(args.status === undefined ? {} : { status: args.status }),
            ...(args.action === undefined ? {} : { action: args.action }),
          }),
        ),
    ),
    server.registerTool(
      "caesar_chat_read",
      {
        title: "Read new chat messages",
        description:
          "Get the messages for you (addressed to you or to everyone, not your own) posted since your last read, then mark them read. Returns `messages` (seq, from, to, title, status, reply_to, ts, body); an empty list means nothing new. Call it when you start and between steps of work. When you have nothing to do until someone answers, use caesar_chat_wait instead.",
        inputSchema: {
          channel,
          as: z.string().optional().describe(`Who reads. ${you}`),
          all: z.boolean().optional().describe("Every new message, including those for others and your own."),
          peek: z.boolean().optional().describe("Do not mark them read."),
        },
        annotations: { readOnlyHint: false },
      },
      async (args) =>
        run(() =>
          readMessages(contextOf(), args.channel, {
            as: identity(args.as, "as"),
            all: args.all === true,
            peek: args.peek === true,
          }),
        ),
    ),
    server.registerTool(
      "caesar_chat_wait",
      {
        title: "Wait for a chat message",
        description: `Sleep, spending no tokens, until a new message for you arrives in the channel, then return it and mark it read (same result as caesar_chat_read, with \`timed_out: false\`). Returns \`{timed_out: true}\` if nothing came within timeout_s. Use it when you wait for an answer, an approval or a handoff. Keep timeout_s below your client's tool-call timeout (often 60 s); after a time-out, call it again or do something else. Default ${DEFAULT_WAIT_S} s, at most ${maxWait} s.`,
        inputSchema: {
          channel,
          as: z.string().optional().describe(`Who waits. ${you}`),
          timeout_s: z.number().min(0).max(maxWait).optional().describe("Seconds to wait at most."),
        },
      },
      async (args, extra) =>
        run(async () => {
          const progressToken = extra._meta?.progressToken;
          const timeoutS = args.timeout_s ?? DEFAULT_WAIT_S;
          return waitForMessages(contextOf(), args.channel, {
            as: identity(args.as, "as"),
            timeoutMs: timeoutS * 1000,
            ...(options.intervalMs === undefined ? {} : { intervalMs: options.intervalMs }),
            signal: extra.signal,
            // Progress keeps clients that reset their timeout on progress from giving up on a long wait.
            ...(progressToken === undefined
              ? {}
              : {
                  onTick: (waitedMs: number) => {
                    const params = { progressToken, progress: waitedMs / 1000, total: timeoutS };
                    void extra.sendNotification({ method: "notifications/progress", params }).catch(() => {});
                  },
                }),
          });
        }),
    ),
    server.registerTool(
      "caesar_chat_task",
      {
        title: "Open a task to claim",
        description:
          "Open a task in a channel so that exactly one agent takes it: creates the marker file task-<id>.md, which caesar_chat_claim (or any agent-chat tool) then claims. Give a short id (e.g. `fix-login-test`) and a title; post a message too if others should hear of it. Fails if the task is already open or claimed.",
        inputSchema: {
          channel,
          task: z.string().describe("Task id (letters, digits, '_', '-'), or the marker name task-<id>.md."),
          title: z.string().optional().describe("What the task is, one line."),
          body: z.string().optional().describe("Details (markdown)."),
          from: z.string().optional().describe(`Who opens it. ${you}`),
        },
      },
      async (args) =>
        run(() =>
          openTask(contextOf(), args.channel, args.task, {
            from: identity(args.from, "from"),
            ...(args.title === undefined ? {} : { title: args.title }),
            ...(args.body === undefined ? {} : { body: args.body }),
          }),
        ),
    ),
    server.registerTool(
      "caesar_chat_claim",
      {
        title: "Claim a task",
        description:
          "Take a task atomically so that no other agent does it too: renames its marker task-<id>.md to task-<id>.CLAIMED-<you>.md. Exactly one claimer wins; if the task is already claimed (by anyone, you included) or was never opened, the call fails with `claim_lost` and says which: pick another task. Open tasks with caesar_chat_task.",
        inputSchema: {
          channel,
          marker: z.string().describe("The task: task-<id>.md, task-<id> or its id."),
          as: z.string().optional().describe(`Who claims. ${you}`),
        },
      },
      async (args) => {
        const result = await run(() =>
          claimTask(contextOf(), args.channel, args.marker, { as: identity(args.as, "as") }),
        );
        const claim = result.structuredContent as {
          claimed?: boolean;
          marker?: string;
          reason?: string;
          holder?: { agent: string };
        };
        if (result.isError || claim.claimed !== false) return result;
        const text =
          claim.reason === "missing"
            ? `claim_lost: there is no ${claim.marker} (never opened, or claimed and renamed). Pick another task.`
            : `claim_lost: ${claim.marker} is already claimed by ${claim.holder?.agent ?? "another agent"}. Pick another task.`;
        return { ...result, isError: true, content: [{ type: "text", text }, ...result.content] };
      },
    ),
  ];
}

/** Run a tool body: its value as JSON (text and structured), or a clear error the model can act on. */
async function run(body: () => Promise<object>): Promise<CallToolResult> {
  try {
    const value = await body();
    return {
      content: [{ type: "text", text: JSON.stringify(value, null, 2) }],
      structuredContent: value as Record<string, unknown>,
    };
  } catch (error) {
    const text = isCaesarError(error)
      ? `${error.code}: ${error.summary}${error.detail ? `\n${error.detail}` : ""}`
      : `internal_error: ${messageOf(error)}`;
    return { isError: true, content: [{ type: "text", text }] };
  }
}
