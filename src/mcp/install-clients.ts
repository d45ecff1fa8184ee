import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
// The ESM build: the UMD one (package "main") requires its parts dynamically, which a bundle cannot follow.
import { applyEdits, modify, type ParseError, parse as parseJsonc } from "jsonc-parser/lib/esm/main.js";
import { parse as parseToml } from "smol-toml";
import { errnoOf } from "../support/errors.js";

/** The stdio server a client should start: `caesar mcp serve`. */
export interface ServerEntry {
  command: string;
  args: string[];
}

export type ClientId = "claude" | "codex" | "opencode" | "gemini" | "copilot";
export const CLIENT_IDS: ClientId[] = ["claude", "codex", "copilot", "gemini", "opencode"];

/** How an entry gets written: by the client's own command, or by a minimal edit of its file. */
export type InstallMethod = { kind: "command"; argv: string[] } | { kind: "file"; content: string };

export interface ClientInstaller {
  id: ClientId;
  /** The client's executable. */
  bin: string;
  /** The user-level configuration file the entry lives in. */
  configFile(env: NodeJS.ProcessEnv): string;
  /** The entry named `name` in that file, as command + args (undefined when absent). */
  readEntry(file: string, name: string): Promise<ServerEntry | undefined>;
  /** How to add the entry; `existing` is the file's current text ("" when absent). */
  method(name: string, entry: ServerEntry, existing: string, file: string): InstallMethod;
  /** The client's own command that lists its servers (what the tests check against). */
  listArgv: string[];
  /** Why this method, for the docs and the --dry-run output. */
  why: string;
}

const home = (env: NodeJS.ProcessEnv) => env.HOME || homedir();

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return "";
    throw error;
  }
}

/** Parse JSON with comments; a file that is not is refused rather than rewritten. */
export function parseJsonConfig(text: string, file: string): Record<string, unknown> {
  if (text.trim() === "") return {};
  const errors: ParseError[] = [];
  const value = parseJsonc(text, errors, { allowTrailingComma: true });
  if (errors.length > 0 || !value || typeof value !== "object" || Array.isArray(value)) {
    throw new Error(`${file} is not a JSON object (offset ${errors[0]?.offset ?? 0}); it was left as it is`);
  }
  return value as Record<string, unknown>;
}

function entryOf(value: unknown): ServerEntry | undefined {
  if (!value || typeof value !== "object") return undefined;
  const record = value as Record<string, unknown>;
  // opencode keeps command and args in one array
  if (Array.isArray(record.command)) {
    const [command, ...args] = record.command.map(String);
    return command === undefined ? undefined : { command, args };
  }
  if (typeof record.command !== "string") return { command: "", args: [] };
  return { command: record.command, args: Array.isArray(record.args) ? record.args.map(String) : [] };
}

function jsonEntryReader(path: string[]) {
  return async (file: string, name: string) => {
    const config = parseJsonConfig(await readText(file), file);
    let node: unknown = config;
    for (const key of [...path, name]) node = (node as Record<string, unknown> | undefined)?.[key];
    return node === undefined ? undefined : entryOf(node);
  };
}

/** A minimal edit of a JSON (or JSONC) file: comments, order and every other entry stay as they are. */
function jsonInsert(existing: string, path: string[], value: unknown): string {
  const base = existing.trim() === "" ? "{}\n" : existing;
  const edits = modify(base, path, value, {
    formattingOptions: { insertSpaces: true, tabSize: 2, eol: "\n" },
  });
  return applyEdits(base, edits);
}

function tomlString(value: string): string {
  return JSON.stringify(value); // a TOML basic string accepts JSON's escapes
}

export const INSTALLERS: Record<ClientId, ClientInstaller> = {
  claude: {
    id: "claude",
    bin: "claude",
    configFile: (env) => join(env.CLAUDE_CONFIG_DIR || home(env), ".claude.json"),
    readEntry: jsonEntryReader(["mcpServers"]),
    method: (name, entry) => ({
      kind: "command",
      argv: ["mcp", "add", "--scope", "user", name, "--", entry.command, ...entry.args],
    }),
    listArgv: ["mcp", "list"],
    why: "claude's own `mcp add --scope user` (~/.claude.json is claude's state file, which it rewrites itself)",
  },
  gemini: {
    id: "gemini",
    bin: "gemini",
    configFile: (env) => join(env.GEMINI_CLI_HOME || home(env), ".gemini", "settings.json"),
    readEntry: jsonEntryReader(["mcpServers"]),
    method: (name, entry) => ({
      kind: "command",
      argv: ["mcp", "add", "--scope", "user", name, entry.command, ...entry.args],
    }),
    listArgv: ["mcp", "list"],
    why: "gemini's own `mcp add --scope user` (it keeps the comments of settings.json)",
  },
  opencode: {
    id: "opencode",
    bin: "opencode",
    configFile: (env) => {
      const dir = join(env.XDG_CONFIG_HOME || join(home(env), ".config"), "opencode");
      const found = ["opencode.jsonc", "opencode.json", "config.json"].find((name) =>
        existsSync(join(dir, name)),
      );
      return join(dir, found ?? "opencode.jsonc");
    },
    readEntry: jsonEntryReader(["mcp"]),
    method: (name, entry) => ({
      kind: "command",
      argv: ["mcp", "add", name, "--", entry.command, ...entry.args],
    }),
    listArgv: ["mcp", "list"],
    why: "opencode's own `mcp add` (it keeps the comments of opencode.jsonc)",
  },
  codex: {
    id: "codex",
    bin: "codex",
    configFile: (env) => join(env.CODEX_HOME || join(home(env), ".codex"), "config.toml"),
    async readEntry(file, name) {
      const text = await readText(file);
      const config = text.trim() === "" ? {} : (parseToml(text) as Record<string, unknown>);
      const servers = config.mcp_servers as Record<string, unknown> | undefined;
      return servers?.[name] === undefined ? undefined : entryOf(servers[name]);
    },
    method(name, entry, existing) {
      const table = [
        "",
        "# Added by `caesar mcp install codex`: the caesar orchestrator's tools.",
        `[mcp_servers.${name}]`,
        `command = ${tomlString(entry.command)}`,
        `args = [${entry.args.map(tomlString).join(", ")}]`,
        "",
      ].join("\n");
      const base = existing === "" || existing.endsWith("\n") ? existing : `${existing}\n`;
      return { kind: "file", content: `${base}${table}` };
    },
    listArgv: ["mcp", "list"],
    why: "a table appended to config.toml (codex 0.171's own `mcp add` rewrites the other [mcp_servers.*] tables and drops their comments)",
  },
  copilot: {
    id: "copilot",
    bin: "copilot",
    configFile: (env) => join(env.COPILOT_HOME || join(home(env), ".copilot"), "mcp-config.json"),
    readEntry: jsonEntryReader(["mcpServers"]),
    method: (name, entry, existing) => ({
      kind: "file",
      content: jsonInsert(existing, ["mcpServers", name], {
        type: "local",
        command: entry.command,
        args: entry.args,
        tools: ["*"],
      }),
    }),
    listArgv: ["mcp", "list"],
    why: "a minimal edit of mcp-config.json (copilot 1.0.102's own `mcp add` rewrites the other entries, dropping the fields it does not know)",
  },
};
