import { type Command, Option } from "commander";
import type { ChatContext } from "../../chat/index.js";
import {
  chatContextOf,
  collectList,
  parseBands,
  parseCount,
  parseInterval,
  parsePositiveInt,
  parseSeconds,
  readBody,
  withRootHint,
} from "../chat-input.js";
import { type CommandContext, type CommandDefinition, handle } from "../command.js";

/** `chat wait` found nothing before its timeout (distinct from 2 = usage error only through --json). */
export const EXIT_WAIT_TIMED_OUT = 2;
/** `chat claim` lost: the marker is already claimed, or missing (as the reference's exit 3). */
export const EXIT_CLAIM_LOST = 3;

const EXIT_CODES_HELP = `
Exit codes of caesar chat:
  0  ok
  1  error (no such channel, channel exists, not the maintainer, ...)
  2  wait timed out (\`chat wait\` only), or a usage error; with --json a timeout prints
     {"timed_out": true, ...} and a usage error {"error": {"code": ...}}
  3  lost claim: the task marker is already claimed (by anyone, the claimer included)
     or there is no such marker

Root: --root, else $AGENT_CHAT_ROOT, else ~/agent-chat. Protocol: docs/chat.md.`;

/** Chat commands take --root as the chat root (the spec's), not the project root. */
function withChatOptions(command: Command): Command {
  return command
    .option("--root <dir>", "chat root holding the channels (default: $AGENT_CHAT_ROOT, else ~/agent-chat)")
    .option("--json", "machine output only on stdout (errors as {error:{code,summary,detail}})");
}

type ChatAction = (ctx: CommandContext, chat: ChatContext, ...positionals: string[]) => Promise<unknown>;

/** `handle` plus the chat context, and the hint toward the project's own chat root; a number returned is the exit code. */
function chatAction(action: ChatAction) {
  return handle(async (ctx, ...positionals) => {
    const chat = chatContextOf(ctx);
    const code = await withRootHint(ctx, chat, () => action(ctx, chat, ...(positionals as string[])));
    return typeof code === "number" ? code : undefined;
  });
}

const lib = () => import("../../chat/index.js");
const render = () => import("../chat-render.js");

/** The subcommands of `caesar chat`, each defining itself on the `chat` command. */
const SUBCOMMANDS: [name: string, define: (chat: Command) => void][] = [
  [
    "init",
    (chat) => {
      withChatOptions(
        chat
          .command("init")
          .description("create a channel (fails if it exists, also when two processes race)")
          .argument("<channel>", "channel name: a folder name, not starting with . or _")
          .option("--members <names>", "declared members, comma-separated", collectList)
          .option("--topic <text>", "what the channel is about")
          .option("--maintainer <agent>", "governance: the agent whose approval counts")
          .option(
            "--band <action=band>",
            "governance: approval band of an action (auto|notify|approval-required)",
            collectList,
          )
          .option("--veto-window <seconds>", "governance: how long a notify can be vetoed", parseSeconds),
      ).action(
        chatAction(async (ctx, chat, channel) => {
          const { initChannel } = await lib();
          const vetoMs = ctx.options.vetoWindow as number | undefined;
          const result = await initChannel(chat, channel!, {
            members: ctx.options.members as string[] | undefined,
            topic: ctx.options.topic as string | undefined,
            maintainer: ctx.options.maintainer as string | undefined,
            approvalBands: parseBands(ctx.options.band as string[] | undefined),
            ...(vetoMs === undefined ? {} : { vetoWindowS: vetoMs / 1000 }),
          });
          ctx.out.result(
            { ...result.meta, dir: result.channel.dir },
            `Created channel ${channel} in ${result.channel.dir}.`,
          );
        }),
      );
    },
  ],
  [
    "channels",
    (chat) => {
      withChatOptions(
        chat
          .command("channels")
          .description("list the channels of the root")
          .option("--as <agent>", "also count the unread messages for this agent"),
      ).action(
        chatAction(async (ctx, chat) => {
          const channels = await (await lib()).listChannels(chat, {
            as: ctx.options.as as string | undefined,
          });
          const { renderChannels } = await render();
          ctx.out.result({ root: chat.root, channels }, () => renderChannels(channels, chat.root));
        }),
      );
    },
  ],
  [
    "roster",
    (chat) => {
      withChatOptions(
        chat
          .command("roster")
          .description("who is in a channel: members, posters, readers, claims")
          .argument("<channel>"),
      ).action(
        chatAction(async (ctx, chat, channel) => {
          const roster = await (await lib()).getRoster(chat, channel!);
          const { renderRoster } = await render();
          ctx.out.result(roster, () => renderRoster(roster));
        }),
      );
    },
  ],
  [
    "post",
    (chat) => {
      withChatOptions(
        chat
          .command("post")
          .description("post a message; prints its sequence (body from --body, --body-file, or piped stdin)")
          .argument("<channel>")
          .requiredOption("--from <agent>", "who posts")
          .requiredOption("--title <text>", "one-line title")
          .option("--to <agents>", "recipients, comma-separated or repeated (default: all)", collectList)
          .option("--reply <seq>", "the sequence this message answers", parsePositiveInt)
          .option(
            "--status <label>",
            "free label: discussion (default), proposal, ack, done, needs-approval ...",
          )
          .option(
            "--action <name>",
            "governance: the action this asks about (merge, deploy ...); sets the status",
          )
          .addOption(new Option("--body <text>", "the markdown body").conflicts("bodyFile"))
          .option("--body-file <file>", "read the body from a file (- for stdin)"),
      ).action(
        chatAction(async (ctx, chat, channel) => {
          const { postMessage } = await lib();
          const result = await postMessage(chat, channel!, {
            from: ctx.options.from as string,
            title: ctx.options.title as string,
            to: ctx.options.to as string[] | undefined,
            replyTo: ctx.options.reply as number | undefined,
            status: ctx.options.status as string | undefined,
            action: ctx.options.action as string | undefined,
            body: await readBody(ctx),
          });
          for (const warning of result.warnings) ctx.out.notice(`warning: ${warning}`);
          const { renderPost } = await render();
          ctx.out.result(result, () => renderPost(result));
        }),
      );
    },
  ],
  [
    "read",
    (chat) => {
      withChatOptions(
        chat
          .command("read")
          .description("print the new messages for an agent, then advance its cursor")
          .argument("<channel>")
          .requiredOption("--as <agent>", "who reads")
          .option("--all", "every new message, not only those for this agent")
          .option("--peek", "leave the cursor where it is"),
      ).action(
        chatAction(async (ctx, chat, channel) => {
          const as = ctx.options.as as string;
          const result = await (await lib()).readMessages(chat, channel!, {
            as,
            all: ctx.options.all === true,
            peek: ctx.options.peek === true,
          });
          const { renderMessages, renderSkipped } = await render();
          for (const line of [...renderSkipped(result.skipped, result.pending), ...result.warnings])
            ctx.out.notice(line);
          ctx.out.result(result, () =>
            result.messages.length > 0
              ? renderMessages(result.messages)
              : `No new messages for ${as} in ${result.channel}.`,
          );
        }),
      );
    },
  ],
  [
    "wait",
    (chat) => {
      withChatOptions(
        chat
          .command("wait")
          .description("block until a message for the agent arrives (then read it), or time out with exit 2")
          .argument("<channel>")
          .requiredOption("--as <agent>", "who waits")
          .option("--timeout <seconds>", "give up after this long (default 300)", parseSeconds)
          .option(
            "--interval <seconds>",
            "polling period, also the rescan period under a file watch (default 2)",
            parseInterval,
          )
          .option("--poll", "sleep-poll only, no file watch (also: CAESAR_CHAT_POLL=1)"),
      ).action(
        chatAction(async (ctx, chat, channel) => {
          const as = ctx.options.as as string;
          const result = await (await lib()).waitForMessages(chat, channel!, {
            as,
            timeoutMs: ctx.options.timeout as number | undefined,
            intervalMs: ctx.options.interval as number | undefined,
            ...(ctx.options.poll === true ? { poll: true } : {}),
          });
          if (result.timed_out) {
            const seconds = Math.round(result.waited_ms / 100) / 10;
            ctx.out.notice(
              `No new message for ${as} in ${result.channel} after ${seconds} s (exit ${EXIT_WAIT_TIMED_OUT}).`,
            );
            ctx.out.result(result);
            return EXIT_WAIT_TIMED_OUT;
          }
          const { renderMessages, renderSkipped } = await render();
          for (const line of [...renderSkipped(result.skipped, result.pending), ...result.warnings])
            ctx.out.notice(line);
          ctx.out.result(result, () => renderMessages(result.messages));
        }),
      );
    },
  ],
  [
    "peek",
    (chat) => {
      withChatOptions(
        chat
          .command("peek")
          .description("print the last messages of a channel, whoever they are for; moves no cursor")
          .argument("<channel>")
          .option("-n, --count <n>", "how many (default 10; 0 shows nothing)", parseCount),
      ).action(
        chatAction(async (ctx, chat, channel) => {
          const result = await (await lib()).peekMessages(
            chat,
            channel!,
            (ctx.options.count as number) ?? 10,
          );
          const { renderMessages, renderSkipped } = await render();
          for (const line of renderSkipped(result.skipped)) ctx.out.notice(line);
          ctx.out.result(result, () => {
            if (result.messages.length > 0) return renderMessages(result.messages);
            if (result.skipped.length > 0)
              return `No readable message among the last ${result.skipped.length} files of ${result.channel}.`;
            return result.max_seq === 0 ? `No messages in ${result.channel} yet.` : "";
          });
        }),
      );
    },
  ],
  [
    "task",
    (chat) => {
      withChatOptions(
        chat
          .command("task")
          .description("open a task for others to claim: create its marker task-<id>.md")
          .argument("<channel>")
          .argument("<task>", "task-<id>.md, task-<id> or <id> (letters, digits, _ and -)")
          .requiredOption("--from <agent>", "who opens it")
          .option("--title <text>", "what the task is")
          .addOption(new Option("--body <text>", "details (markdown)").conflicts("bodyFile"))
          .option("--body-file <file>", "read the details from a file (- for stdin)"),
      ).action(
        chatAction(async (ctx, chat, channel, task) => {
          const result = await (await lib()).openTask(chat, channel!, task!, {
            from: ctx.options.from as string,
            ...(ctx.options.title === undefined ? {} : { title: ctx.options.title as string }),
            body: await readBody(ctx),
          });
          const { renderOpenTask } = await render();
          ctx.out.result(result, () => renderOpenTask(result));
        }),
      );
    },
  ],
  [
    "claim",
    (chat) => {
      withChatOptions(
        chat
          .command("claim")
          .description(
            "take a task marker atomically (renames task-<id>.md); exit 3 if it is taken or missing",
          )
          .argument("<channel>")
          .argument("<task>", "task-<id>.md (as the reference takes it), task-<id> or <id>")
          .requiredOption("--as <agent>", "who claims"),
      ).action(
        chatAction(async (ctx, chat, channel, marker) => {
          const as = ctx.options.as as string;
          const result = await (await lib()).claimTask(chat, channel!, marker!, { as });
          const { renderClaim } = await render();
          if (!result.claimed) {
            ctx.out.notice(renderClaim(result, as));
            ctx.out.result(result);
            return EXIT_CLAIM_LOST;
          }
          ctx.out.result(result, () => renderClaim(result, as));
        }),
      );
    },
  ],
  [
    "approve",
    (chat) => {
      withChatOptions(
        chat
          .command("approve")
          .description("governance: the maintainer approves (or vetoes) a message; others are refused")
          .argument("<channel>")
          .argument("<seq>", "the message to approve", parsePositiveInt)
          .requiredOption("--as <maintainer>", "the channel's maintainer")
          .option("--veto", "veto instead of approving")
          .option("--note <text>", "body of the decision"),
      ).action(
        chatAction(async (ctx, chat, channel, seq) => {
          const result = await (await lib()).approveMessage(chat, channel!, Number(seq), {
            as: ctx.options.as as string,
            veto: ctx.options.veto === true,
            ...(ctx.options.note === undefined ? {} : { note: ctx.options.note as string }),
          });
          for (const warning of result.warnings) ctx.out.notice(`warning: ${warning}`);
          const { renderApprove } = await render();
          ctx.out.result(result, () => renderApprove(result));
        }),
      );
    },
  ],
];

export const CHAT_SUBCOMMANDS = SUBCOMMANDS.map(([name]) => name);

/**
 * `caesar chat` and its subcommands, or (`only`) just one of them: chat-main.ts defines only the one a
 * command line names, since building every subcommand's options is a measurable part of the start-up
 * of a process that runs one (bench/chat).
 */
export function defineChatCommand(program: Command, only?: string): Command {
  const chat = program
    .command("chat")
    .description("agent-chat channels: peer agents post, read, wait for and claim work through a folder")
    .helpCommand(false)
    .addHelpText("after", EXIT_CODES_HELP);
  for (const [name, define] of SUBCOMMANDS) if (only === undefined || name === only) define(chat);
  return chat;
}

export const chatCommand: CommandDefinition = {
  name: "chat",
  group: "delegate",
  define: (program) => defineChatCommand(program),
};
