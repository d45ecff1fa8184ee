import type { Mode } from "../../protocol/task.js";
import { isReadOnlyCommand } from "./read-only-command.js";
import { commandOf, cwdOf, type KnownToolCall } from "./tool-calls.js";
import { isInside, resolveReal } from "./workspace-fs.js";

/** What caesar's policy says to one permission request, and why (the why is recorded). */
export interface PermissionVerdict {
  allow: boolean;
  reason: string;
  /** A call to caesar's own return channel: nobody need be asked (a question it carries is asked itself). */
  channel?: boolean;
}

export interface PermissionContext {
  mode: Mode;
  /** The task's workspace: the only place a write task may change. */
  workspace: string;
  /** Directories outside the workspace the agent may read and run in (the task directory). */
  readableDirs: string[];
  /**
   * Files outside the workspace the agent may write whatever the mode: its report. Nothing else of the
   * task directory — an agent that could write `answers/` would grant its own permissions.
   */
  writableFiles: string[];
  /** caesar's own return channel (its server name and tools): always allowed, it only talks to caesar. */
  channel?: { name: string; tools: string[] };
}

const WRITING_KINDS = new Set(["edit", "delete", "move"]);
const READING_KINDS = new Set(["read", "search", "think", "fetch"]);

/**
 * Answer an ACP agent's permission request by caesar's policy. Read-only: reads and provably read-only
 * commands pass, every edit and any other command is refused. Write: edits only inside the workspace (or
 * the task directory), commands only from inside it. Paths are resolved (symbolic links followed) before
 * they are compared; an edit whose path cannot be told is refused.
 */
export async function decidePermission(
  call: KnownToolCall,
  context: PermissionContext,
): Promise<PermissionVerdict> {
  const workspace = await resolveReal(context.workspace);
  const readable = await Promise.all(context.readableDirs.map((dir) => resolveReal(dir)));
  const files = await Promise.all(context.writableFiles.map((file) => resolveReal(file)));
  const inWorkspace = async (path: string) => isInside(workspace, await resolveReal(path));
  const isWritableFile = async (path: string) => files.includes(await resolveReal(path));
  const inWritable = async (path: string) => (await inWorkspace(path)) || (await isWritableFile(path));
  const inReadable = async (path: string) => {
    const real = await resolveReal(path);
    return isInside(workspace, real) || readable.some((dir) => isInside(dir, real));
  };
  const outside = async (paths: string[], test: (path: string) => Promise<boolean>) => {
    for (const path of paths) if (!(await test(path))) return path;
    return undefined;
  };

  if (context.channel && isChannelCall(call, context.channel))
    return { allow: true, reason: "caesar's return channel", channel: true };

  if (WRITING_KINDS.has(call.kind)) {
    if (call.paths.length === 0) return { allow: false, reason: "an edit whose path the agent did not say" };
    const stray = await outside(call.paths, inWritable);
    if (stray) return { allow: false, reason: `${stray} is outside the task's workspace` };
    if (context.mode === "read-only" && (await outside(call.paths, isWritableFile))) {
      // The report stays writable in a read-only task; the workspace does not.
      return { allow: false, reason: "a read-only task changes no file in the workspace" };
    }
    return { allow: true, reason: "an edit inside the workspace" };
  }

  if (call.kind === "execute") {
    const cwd = cwdOf(call);
    if (cwd && !(await inWritable(cwd)))
      return { allow: false, reason: `runs in ${cwd}, outside the workspace` };
    if (context.mode === "write") return { allow: true, reason: "a command in a write task" };
    const command = commandOf(call) ?? call.title;
    return isReadOnlyCommand(command)
      ? { allow: true, reason: "a read-only command" }
      : { allow: false, reason: "a read-only task runs only commands that provably change nothing" };
  }

  if (READING_KINDS.has(call.kind)) {
    const stray = await outside(call.paths, inReadable);
    if (stray) return { allow: false, reason: `${stray} is outside the task's workspace` };
    return { allow: true, reason: `a ${call.kind} inside the workspace` };
  }

  if (context.mode === "read-only") {
    return {
      allow: false,
      reason:
        call.kind === "switch_mode"
          ? "a read-only task does not let the agent change its own mode"
          : `a read-only task refuses tools of unknown effect (${call.kind})`,
    };
  }
  return { allow: true, reason: `a ${call.kind} tool in a write task` };
}

/**
 * A call to caesar's own MCP server, as each agent names it: `mcp__caesar__ask_orchestrator` (claude),
 * `mcp_caesar_…` (gemini), `caesar_…` (opencode), `caesar-…` (copilot), or the bare tool name (a title
 * like `ask_orchestrator (caesar MCP Server)`). Never a command or an edit, whatever its name.
 */
function isChannelCall(call: KnownToolCall, channel: { name: string; tools: string[] }): boolean {
  if (WRITING_KINDS.has(call.kind) || call.kind === "execute" || channel.tools.length === 0) return false;
  const server = escapeRegExp(channel.name);
  const tools = channel.tools.map(escapeRegExp).join("|");
  const pattern = new RegExp(`^(?:mcp__${server}__|mcp_${server}_|${server}_|${server}-)?(?:${tools})$`);
  const names = [call.name ?? "", call.title.split(/\s+/)[0] ?? ""].filter(Boolean);
  return names.some((name) => pattern.test(name));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
