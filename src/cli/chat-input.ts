import { existsSync, fstatSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { InvalidArgumentError } from "commander";
import { makeChatContext } from "../chat/context.js";
import type { ApprovalBand, ChatContext } from "../chat/index.js";
import { findProjectRoot } from "../config/project-root.js";
import { CaesarError, errnoOf, isCaesarError, UsageError } from "../support/errors.js";
import type { CommandContext } from "./command.js";

/** Option parsing and input gathering for `caesar chat`, kept apart from the command definitions. */

/** A number of seconds (fractions allowed) as milliseconds; commander turns the throw into a usage error. */
export function parseSeconds(raw: string): number {
  const value = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(value) || value < 0)
    throw new InvalidArgumentError(`expected a number of seconds (>= 0), got ${JSON.stringify(raw)}.`);
  return Math.round(value * 1000);
}

/** A polling period: at least 50 ms, so that no setting can turn `wait` into a busy loop. */
export function parseInterval(raw: string): number {
  const value = parseSeconds(raw);
  if (value < 50)
    throw new InvalidArgumentError(`expected at least 0.05 seconds, got ${JSON.stringify(raw)}.`);
  return value;
}

export function parsePositiveInt(raw: string): number {
  const value = Number(raw.replace(/^#/, ""));
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new InvalidArgumentError(`expected a positive whole number, got ${JSON.stringify(raw)}.`);
  return value;
}

/** A count that may be 0 (`peek -n 0` shows nothing, as the reference's). */
export function parseCount(raw: string): number {
  const value = Number(raw);
  if (raw.trim() === "" || !Number.isSafeInteger(value) || value < 0)
    throw new InvalidArgumentError(`expected a whole number (>= 0), got ${JSON.stringify(raw)}.`);
  return value;
}

/** Repeatable, comma-separated list option (`--to a,b --to c`). */
export function collectList(raw: string, previous: string[] = []): string[] {
  return [...previous, ...raw.split(",").map((item) => item.trim())].filter(Boolean);
}

/** The chat context of a command: `--root`, else `$AGENT_CHAT_ROOT`, else `~/agent-chat`. */
export function chatContextOf(ctx: CommandContext): ChatContext {
  return makeChatContext({ root: ctx.options.root as string | undefined, cwd: ctx.cwd });
}

// File-system failures a user can meet and fix (permissions, a full or read-only disk, a file in
// the way): reported as such, not as a bug in caesar.
const FS_ERRORS = new Set([
  "EACCES",
  "EPERM",
  "EROFS",
  "ENOSPC",
  "EDQUOT",
  "ENOTDIR",
  "EISDIR",
  "EMFILE",
  "ENFILE",
]);

/**
 * Run `action`, turning file-system failures into clear errors; when a channel is missing from the
 * default root but exists in the project's own chat root (`.caesar/chat/`, where caesar's
 * sub-agents talk), say how to reach it.
 */
export async function withRootHint<T>(
  ctx: CommandContext,
  chat: ChatContext,
  action: () => Promise<T>,
): Promise<T> {
  try {
    return await action();
  } catch (error) {
    const errno = errnoOf(error);
    if (!isCaesarError(error) && errno !== undefined && FS_ERRORS.has(errno))
      throw new CaesarError("file_system_error", `${(error as Error).message}.`, {
        detail: `Check the permissions and free space of the chat root ${chat.root} (--root or AGENT_CHAT_ROOT to use another).`,
        cause: error,
      });
    if (!isCaesarError(error) || error.code !== "channel_not_found" || chat.rootOrigin === "option")
      throw error;
    const channel = String(error.data.channel ?? "");
    const projectChat = join(findProjectRoot(ctx.cwd), ".caesar", "chat");
    if (projectChat === chat.root || !existsSync(join(projectChat, channel, "_meta.json"))) throw error;
    throw new CaesarError(error.code, error.summary, {
      detail: `This project has it: pass --root ${projectChat} (or export AGENT_CHAT_ROOT=${projectChat}).`,
    });
  }
}

/** The body of a post: --body, --body-file (`-` for stdin), else standard input when it is piped. */
export async function readBody(ctx: CommandContext): Promise<string> {
  const body = ctx.options.body as string | undefined;
  const bodyFile = ctx.options.bodyFile as string | undefined;
  if (body !== undefined && bodyFile !== undefined)
    throw new UsageError("invalid_argument", "Give the body once: --body or --body-file, not both.", {
      detail: "Use --body for a short text, --body-file <file> (or -) for a longer one.",
    });
  if (body !== undefined) return body;
  if (bodyFile === "-") return readStdin(ctx);
  if (bodyFile !== undefined) {
    try {
      // Synchronous: node:fs/promises alone costs every `caesar chat` process ≈ 3 ms to load (bench/chat).
      return readFileSync(resolve(ctx.cwd, bodyFile), "utf8");
    } catch (error) {
      throw new CaesarError(
        "body_file_unreadable",
        `Cannot read --body-file ${bodyFile}: ${errnoOf(error) ?? error}.`,
        {
          detail: "Pass the path of a readable text file, or - to read the body from standard input.",
        },
      );
    }
  }
  return isPipedStdin() ? readStdin(ctx) : "";
}

// A terminal is never read implicitly (that would hang a person's `post`); a pipe, a socket or a file is.
// Told apart by the descriptor's type rather than with node:tty, which loads `net` — ≈ 10 ms of every
// `caesar chat` process (bench/chat); /dev/null, a character device too, reads empty either way.
function isPipedStdin(): boolean {
  try {
    const stats = fstatSync(0);
    return stats.isFIFO() || stats.isFile() || stats.isSocket();
  } catch {
    return false;
  }
}

async function readStdin(ctx: CommandContext): Promise<string> {
  const hint = setTimeout(
    () =>
      ctx.out.notice("caesar chat post: reading the body from standard input (close it, or pass --body)..."),
    3000,
  );
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  } finally {
    clearTimeout(hint);
  }
}

const BANDS = new Set<string>(["auto", "notify", "approval-required"]);

/** `--band merge=approval-required` options as approval bands. */
export function parseBands(raw: string[] | undefined): Record<string, ApprovalBand> | undefined {
  if (raw === undefined) return undefined;
  const bands: Record<string, ApprovalBand> = {};
  for (const item of raw) {
    const [action, band] = item.split("=").map((part) => part.trim());
    if (!action || !band || !BANDS.has(band))
      throw new UsageError(
        "invalid_argument",
        `--band ${item}: expected <action>=auto|notify|approval-required.`,
        {
          detail: "For example --band merge=approval-required --band push=notify --band '*=auto'.",
        },
      );
    bands[action] = band as ApprovalBand;
  }
  return bands;
}
