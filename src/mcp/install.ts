import { execFile } from "node:child_process";
import { mkdir, readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname } from "node:path";
import { parse as parseToml } from "smol-toml";
import { writeFileAtomic } from "../support/atomic-file.js";
import { CaesarError, messageOf, UsageError } from "../support/errors.js";
import { findExecutable } from "../support/executable-path.js";
import { CAESAR_BIN } from "../support/package-paths.js";
import {
  CLIENT_IDS,
  type ClientId,
  type ClientInstaller,
  INSTALLERS,
  parseJsonConfig,
  type ServerEntry,
} from "./install-clients.js";

export interface InstallOptions {
  name: string;
  dryRun: boolean;
  env: NodeJS.ProcessEnv;
}

export interface InstallOutcome {
  client: ClientId;
  name: string;
  server: ServerEntry;
  file: string;
  method: "command" | "file";
  /** The client command run (or that would run), as argv; null for a file edit. */
  command: string[] | null;
  /** What the edited file becomes (file edits, shown by --dry-run). */
  content: string | null;
  why: string;
  status: "installed" | "already-installed" | "dry-run";
}

/** `caesar mcp serve`, started by this very installation of caesar (absolute paths: no PATH lookup). */
export function caesarServerEntry(): ServerEntry {
  return { command: process.execPath, args: [CAESAR_BIN, "mcp", "serve"] };
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function findInstaller(client: string): ClientInstaller {
  if ((CLIENT_IDS as string[]).includes(client)) return INSTALLERS[client as ClientId];
  throw new UsageError("unknown_client", `Unknown MCP client "${client}".`, {
    detail: `caesar mcp install knows: ${CLIENT_IDS.join(", ")}.`,
  });
}

/**
 * Register `caesar mcp serve` with an agent CLI, at user level, merging with what is there: the client's
 * own command where it keeps the rest of its file intact, else a minimal edit of its file. An entry of
 * the same name that differs is never overwritten; one that matches is left alone.
 */
export async function installClient(client: string, options: InstallOptions): Promise<InstallOutcome> {
  const installer = findInstaller(client);
  if (!NAME.test(options.name)) {
    throw new UsageError("invalid_server_name", `Invalid server name ${JSON.stringify(options.name)}.`, {
      detail: "Use 1–64 letters, digits, '-' or '_'.",
    });
  }
  const entry = caesarServerEntry();
  const file = installer.configFile(options.env);
  let existing: ServerEntry | undefined;
  try {
    existing = await installer.readEntry(file, options.name);
  } catch (error) {
    throw new CaesarError("client_config_unreadable", `Cannot read ${client}'s configuration ${file}.`, {
      detail: `${messageOf(error)}. Nothing was changed; fix the file, then retry.`,
    });
  }
  const base = { client: installer.id, name: options.name, server: entry, file, why: installer.why };
  if (existing && sameEntry(existing, entry)) {
    return { ...base, method: "command", command: null, content: null, status: "already-installed" };
  }
  if (existing) {
    throw new CaesarError(
      "mcp_server_exists",
      `${client} already has an MCP server named "${options.name}", which starts something else.`,
      {
        detail: `In ${file}: ${[existing.command, ...existing.args].join(" ")}\nIt was left as it is. Remove it with ${client}'s own command, or install under another name: caesar mcp install ${client} --name caesar-2.`,
      },
    );
  }
  const current = await readFile(file, "utf8").catch(() => "");
  const method = installer.method(options.name, entry, current, file);
  const command = method.kind === "command" ? [installer.bin, ...method.argv] : null;
  const content = method.kind === "file" ? method.content : null;
  const outcome: InstallOutcome = { ...base, method: method.kind, command, content, status: "dry-run" };
  if (options.dryRun) return outcome;

  if (method.kind === "command") {
    const bin = findExecutable(installer.bin, options.env);
    if (!bin) {
      throw new CaesarError("client_not_installed", `${installer.bin} is not on PATH.`, {
        detail: `Install ${client} first (or put it on PATH); \`caesar mcp install ${client} --dry-run\` shows what would be registered.`,
      });
    }
    await runClient(bin, method.argv, options.env);
  } else {
    checkEdit(installer, file, method.content);
    await mkdir(dirname(file), { recursive: true });
    await writeFileAtomic(file, method.content, { shared: true });
  }
  const written = await installer.readEntry(file, options.name).catch(() => undefined);
  if (!written || !sameEntry(written, entry)) {
    throw new CaesarError("install_unverified", `${client} did not record the server in ${file}.`, {
      detail: `Check with \`${installer.bin} ${installer.listArgv.join(" ")}\`.`,
    });
  }
  return { ...outcome, status: "installed" };
}

/** An edited file must still parse, and hold the entry: otherwise nothing is written. */
function checkEdit(installer: ClientInstaller, file: string, content: string): void {
  try {
    if (file.endsWith(".toml")) parseToml(content);
    else parseJsonConfig(content, file);
  } catch (error) {
    throw new CaesarError("client_config_edit_failed", `Cannot add the server to ${file} safely.`, {
      detail: `${messageOf(error)}. Nothing was written. Add it by hand, as \`caesar mcp install ${installer.id} --dry-run\` shows.`,
    });
  }
}

function sameEntry(a: ServerEntry, b: ServerEntry): boolean {
  return (
    a.command === b.command && a.args.length === b.args.length && a.args.every((arg, i) => arg === b.args[i])
  );
}

function runClient(bin: string, argv: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    // From the home directory: a project's own configuration must not capture a user-level install.
    const child = execFile(
      bin,
      argv,
      { cwd: env.HOME || homedir(), env, timeout: 120_000, maxBuffer: 4 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (!error) return resolve();
        reject(
          new CaesarError("client_command_failed", `\`${[bin, ...argv].join(" ")}\` failed.`, {
            detail: `${stderr.trim() || stdout.trim() || messageOf(error)}\nNothing else was changed.`,
          }),
        );
      },
    );
    child.stdin?.end();
  });
}
