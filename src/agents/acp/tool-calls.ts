import { rec, str } from "../stream-json.js";
import { clip, summarizeToolInput } from "../tool-summary.js";

/** What caesar knows of one ACP tool call, merged from `tool_call`, its updates and permission requests. */
export interface KnownToolCall {
  id: string;
  title: string;
  kind: string;
  /** The tool's programmatic name, when the agent gives one (`name`, or claude's `_meta.claudeCode.toolName`). */
  name?: string;
  rawInput?: unknown;
  /** Paths the call touches: `locations`, diff contents, path-like members of its input. */
  paths: string[];
  /** Diffs the call carries: file changes once it completes. */
  diffs: { path: string; oldText: string | null }[];
  /** The call's latest `content` (texts, diffs, terminals), as the agent sent it. */
  content?: unknown[];
  /** The call's latest `locations`, as the agent sent them. */
  locations?: unknown[];
}

// Shell tools become `shell`, so the event vocabulary stays the same whichever agent ran the command.
const NAME_BY_KIND: Record<string, string> = {
  execute: "shell",
  edit: "edit",
  delete: "delete",
  move: "move",
  read: "read",
  search: "search",
  fetch: "fetch",
  think: "think",
  switch_mode: "switch_mode",
};

const PATH_KEYS = ["file_path", "filePath", "filepath", "path", "fileName", "notebook_path", "absolute_path"];
const CWD_KEYS = ["cwd", "workdir", "dir_path", "directory"];

/** The tool calls of one session, by id; every update may carry only what changed. */
export class ToolCalls {
  private readonly calls = new Map<string, KnownToolCall>();

  /** Merge what a `tool_call`, `tool_call_update` or permission request says about a call. */
  merge(raw: unknown): KnownToolCall | undefined {
    const update = rec(raw);
    const id = str(update.toolCallId);
    if (!id) return undefined;
    const known = this.calls.get(id) ?? { id, title: "", kind: "other", paths: [], diffs: [] };
    const title = str(update.title);
    if (title) known.title = title;
    const kind = str(update.kind);
    if (kind) known.kind = kind;
    const name = str(update.name) ?? str(rec(rec(update._meta).claudeCode).toolName);
    if (name) known.name = name;
    if (update.rawInput !== undefined && update.rawInput !== null) {
      const input = rec(update.rawInput);
      // A later update with less input (opencode sends `{}` first, then the command) never erases more.
      if (Object.keys(input).length > 0 || known.rawInput === undefined) known.rawInput = update.rawInput;
    }
    if (Array.isArray(update.content) && update.content.length > 0) known.content = update.content;
    if (Array.isArray(update.locations) && update.locations.length > 0) known.locations = update.locations;
    const paths = new Set(known.paths);
    for (const location of Array.isArray(update.locations) ? update.locations : []) {
      const path = str(rec(location).path);
      if (path) paths.add(path);
    }
    for (const item of Array.isArray(update.content) ? update.content : []) {
      const content = rec(item);
      const path = str(content.path);
      if (content.type === "diff" && path) {
        paths.add(path);
        if (!known.diffs.some((diff) => diff.path === path))
          known.diffs.push({ path, oldText: typeof content.oldText === "string" ? content.oldText : null });
      }
    }
    const input = rec(known.rawInput);
    for (const key of PATH_KEYS) {
      const value = str(input[key]);
      if (value) paths.add(value);
    }
    // codex's patches: `changes` maps each path to what happens to it.
    for (const path of Object.keys(rec(input.changes))) paths.add(path);
    known.paths = [...paths];
    this.calls.set(id, known);
    return known;
  }

  get(id: string): KnownToolCall | undefined {
    return this.calls.get(id);
  }
}

/** The tool's name in caesar's events. */
export function toolNameOf(call: KnownToolCall): string {
  return call.name ?? NAME_BY_KIND[call.kind] ?? (call.title || "tool");
}

/** One line saying what the call does: its command or path, else its title. */
export function toolSummaryOf(call: KnownToolCall): string {
  const command = call.kind === "execute" ? commandOf(call) : undefined;
  if (command) return clip(command);
  // A file tool is its paths (codex's input is a whole patch).
  if (FILE_KINDS.has(call.kind) && call.paths.length > 0) return clip(call.paths.join(", "));
  return summarizeToolInput(call.rawInput) || call.title;
}

const FILE_KINDS = new Set(["edit", "delete", "move", "read"]);

/** The command a shell call runs, when its input says (a string, or an argv array). */
export function commandOf(call: KnownToolCall): string | undefined {
  const input = rec(call.rawInput);
  for (const key of ["command", "cmd", "commands"]) {
    const value = input[key];
    if (typeof value === "string" && value.trim() !== "") return value;
    if (Array.isArray(value) && value.length > 0) {
      const parts = value.map(String);
      // An argv like ["/bin/bash", "-lc", "…"] runs its last member.
      if (/(^|\/)(ba|z)?sh$/.test(parts[0] ?? "") && /^-l?c$/.test(parts[1] ?? ""))
        return parts.slice(2).join(" ");
      return key === "commands" ? parts.join(" && ") : parts.join(" ");
    }
  }
  return undefined;
}

/** The directory a shell call runs in, when its input says. */
export function cwdOf(call: KnownToolCall): string | undefined {
  const input = rec(call.rawInput);
  for (const key of CWD_KEYS) {
    const value = str(input[key]);
    if (value) return value;
  }
  return undefined;
}
