import { mkdirSync, readdirSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { errnoOf } from "../support/errors.js";
import { removeIfWriterGone, unlinkQuietly, writeTempFile } from "./exclusive-file.js";
import { isTempFileName } from "./filename.js";
import { slugify, validateName } from "./names.js";

/**
 * Cursors: `.cursors/<slug>.txt` in the channel, where `<slug>` is the reference implementation's slug
 * of the agent's name (`bob_2` → `bob-2`, `Claude.Code` → `claude-code`), holding the highest sequence
 * the agent has consumed as a decimal number, written as the reference writes it (`12`). Written
 * atomically (temp file + rename), so another reader never sees it half-written.
 *
 * caesar before the agent-chat interoperability work named the file after the agent itself
 * (`bob_2.txt`); such a file is still read, and the higher of the two counts.
 */
export const CURSORS_DIR = ".cursors";

export interface CursorValue {
  seq: number;
  /** Set when the file held something other than a number (then the cursor reads as 0). */
  problem?: string;
}

export function cursorPath(channelDir: string, agent: string): string {
  return join(channelDir, CURSORS_DIR, `${slugify(validateName(agent, "agent"))}.txt`);
}

// Agent names older caesar versions accepted, and named cursor files after.
const LEGACY_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

function legacyCursorPath(channelDir: string, agent: string): string | undefined {
  if (!LEGACY_NAME.test(agent) || agent.includes("..") || slugify(agent) === agent) return undefined;
  return join(channelDir, CURSORS_DIR, `${agent}.txt`);
}

// The reference writes its cursor in place (truncate, then write): a reader can catch it empty, and
// taking that for 0 would deliver every message again. Look again a few times over ~50 ms first.
const EMPTY_RETRIES = 5;
const EMPTY_RETRY_MS = 10;

export async function readCursor(channelDir: string, agent: string): Promise<CursorValue> {
  const current = await readCursorFile(cursorPath(channelDir, agent), agent);
  const legacyPath = legacyCursorPath(channelDir, agent);
  if (legacyPath === undefined) return current;
  const legacy = await readCursorFile(legacyPath, agent);
  return legacy.seq > current.seq ? legacy : current;
}

async function readCursorFile(path: string, agent: string): Promise<CursorValue> {
  for (let attempt = 0; ; attempt++) {
    let raw: string;
    try {
      raw = readFileSync(path, "utf8");
    } catch (error) {
      if (errnoOf(error) === "ENOENT") return { seq: 0 };
      throw error;
    }
    const text = raw.trim();
    if (text === "" && attempt < EMPTY_RETRIES) {
      await sleep(EMPTY_RETRY_MS);
      continue;
    }
    if (text === "") return { seq: 0 };
    // Lenient: another tool may write `12`, `12\n`, `seq: 12` or a JSON number.
    const match = /^(?:seq\s*:\s*)?(\d+)$/.exec(text);
    if (!match)
      return { seq: 0, problem: `the cursor file of ${agent} holds ${JSON.stringify(text.slice(0, 40))}` };
    return { seq: Number(match[1]) };
  }
}

/** Move the cursor to `seq`; never backwards (another reader of the same agent may be ahead). */
export async function advanceCursor(channelDir: string, agent: string, seq: number): Promise<number> {
  const current = await readCursor(channelDir, agent);
  if (seq <= current.seq) return current.seq;
  const path = cursorPath(channelDir, agent);
  mkdirSync(join(channelDir, CURSORS_DIR), { recursive: true });
  const temp = writeTempFile(path, String(seq));
  try {
    renameSync(temp, path);
  } catch (error) {
    unlinkQuietly(temp);
    throw error;
  }
  return seq;
}

/**
 * Every cursor in the channel, by file name without `.txt` (the agent's slug, or its name for a cursor
 * written by an older caesar). Temp files left by a reader that was killed are removed on the way, by
 * the lock's rule (see removeIfWriterGone).
 */
export async function listCursors(channelDir: string, staleMs: number): Promise<Record<string, number>> {
  let names: string[];
  const dir = join(channelDir, CURSORS_DIR);
  try {
    names = readdirSync(dir);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return {};
    throw error;
  }
  const cursors: Record<string, number> = {};
  for (const name of names.sort()) {
    if (isTempFileName(name)) {
      removeIfWriterGone(join(dir, name), staleMs);
      continue;
    }
    if (!name.endsWith(".txt") || name.startsWith(".")) continue;
    const value = await readCursorFile(join(dir, name), name.slice(0, -4));
    cursors[name.slice(0, -4)] = value.seq;
  }
  return cursors;
}
