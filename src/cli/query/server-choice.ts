import { createInterface } from "node:readline/promises";
import { listServeAddresses, type ServeAddress } from "../../api/address-file.js";
import { DEFAULT_PORT } from "../../api/protocol-ids.js";
import { UsageError } from "../../support/errors.js";
import { parseLocalUrl } from "./client.js";

export interface ServerChoice {
  /** The server's origin. */
  url: URL;
  /** Its address file, when it was found through one (not given by --server <url> or CAESAR_URL). */
  address?: ServeAddress;
  /** Nothing named it and no server of this workspace runs: the default address, where anything may listen. */
  fallback?: true;
}

export interface ChooseOptions {
  /** `--server <url|pid>`. */
  server?: string | undefined;
  env?: NodeJS.ProcessEnv;
  /** May the user be asked (a terminal on both ends, no --json)? */
  interactive: boolean;
}

/**
 * Which server a client talks to: `--server` (a URL, or the pid of one of this workspace's servers), else
 * CAESAR_URL, else the live server of this workspace — or, when several run, the one the user picks (asked
 * on a terminal; otherwise a clear error listing them) — else http://127.0.0.1:4173.
 */
export async function chooseServer(root: string, options: ChooseOptions): Promise<ServerChoice> {
  const env = options.env ?? process.env;
  if (options.server !== undefined && !/^\d+$/.test(options.server)) {
    return { url: parseLocalUrl(options.server, "--server") };
  }
  const fromEnv = env.CAESAR_URL?.trim();
  if (options.server === undefined && fromEnv) return { url: parseLocalUrl(fromEnv, "CAESAR_URL") };
  const live = await listServeAddresses(root);
  if (options.server !== undefined) {
    const address = live.find((candidate) => String(candidate.pid) === options.server);
    if (!address) {
      throw new UsageError(
        "no_such_server",
        `No caesar server of this workspace has pid ${options.server}.`,
        {
          detail:
            live.length > 0
              ? `Running: \n${listing(live)}`
              : "None is running: start one with `caesar serve`.",
        },
      );
    }
    return found(address);
  }
  if (live.length === 0) return { url: new URL(`http://127.0.0.1:${DEFAULT_PORT}/`), fallback: true };
  if (live.length === 1) return found(live[0]!);
  if (!options.interactive) {
    throw new UsageError(
      "several_servers",
      `${live.length} caesar servers serve this workspace: say which one.`,
      {
        detail: `${listing(live)}\nPass --server <pid or url> (e.g. --server ${live[0]!.pid}), or set CAESAR_URL (e.g. CAESAR_URL=${live[0]!.url}).`,
      },
    );
  }
  return found(await ask(live));
}

function found(address: ServeAddress): ServerChoice {
  return { url: parseLocalUrl(address.url, `the address file of pid ${address.pid}`), address };
}

function listing(live: readonly ServeAddress[]): string {
  return live
    .map((address, i) => `  ${i + 1}) ${address.url}  pid ${address.pid}, started ${address.started_at}`)
    .join("\n");
}

/** Ask on the terminal which server, until the answer is one of them (or input ends). */
async function ask(live: readonly ServeAddress[]): Promise<ServeAddress> {
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  // A pending question never settles when input ends (Ctrl-D): the end is an empty answer.
  const ended = new Promise<string>((resolve) => prompt.once("close", () => resolve("")));
  try {
    process.stderr.write(`Several caesar servers serve this workspace:\n${listing(live)}\n`);
    for (;;) {
      const question = prompt.question(`Which one? [1-${live.length}] `).catch(() => "");
      const answer = (await Promise.race([question, ended])).trim();
      const choice = live[Number(answer) - 1];
      if (/^\d+$/.test(answer) && choice) return choice;
      if (answer === "") {
        throw new UsageError("several_servers", "No server chosen.", {
          detail: "Pass --server <pid or url>, or set CAESAR_URL.",
        });
      }
      process.stderr.write(`Answer a number from 1 to ${live.length}.\n`);
    }
  } finally {
    prompt.close();
  }
}

/** The user can be asked: no --json, and a terminal to read the answer from and to ask on. */
export function isInteractive(json: boolean): boolean {
  return !json && process.stdin.isTTY === true && process.stderr.isTTY === true;
}
