import { mkdir, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../support/atomic-file.js";
import { errnoOf } from "../support/errors.js";
import { validateName } from "./names.js";

/**
 * Cursors: `.cursors/<agent>.txt` in the channel, holding the highest sequence the agent has
 * consumed, as a decimal number and a newline (`12\n`). Written atomically (temp file + rename).
 */
export const CURSORS_DIR = ".cursors";

export interface CursorValue {
  seq: number;
  /** Set when the file held something other than a number (then the cursor reads as 0). */
  problem?: string;
}

export function cursorPath(channelDir: string, agent: string): string {
  return join(channelDir, CURSORS_DIR, `${validateName(agent, "agent")}.txt`);
}

export async function readCursor(channelDir: string, agent: string): Promise<CursorValue> {
  let raw: string;
  try {
    raw = await readFile(cursorPath(channelDir, agent), "utf8");
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return { seq: 0 };
    throw error;
  }
  const text = raw.trim();
  // Lenient: another tool may write `12`, `seq: 12` or a JSON number.
  const match = /^(?:seq\s*:\s*)?(\d+)$/.exec(text);
  if (text === "") return { seq: 0 };
  if (!match)
    return { seq: 0, problem: `${CURSORS_DIR}/${agent}.txt holds ${JSON.stringify(text.slice(0, 40))}` };
  return { seq: Number(match[1]) };
}

/** Move the cursor to `seq`; never backwards (another reader of the same agent may be ahead). */
export async function advanceCursor(channelDir: string, agent: string, seq: number): Promise<number> {
  const current = await readCursor(channelDir, agent);
  if (seq <= current.seq) return current.seq;
  await mkdir(join(channelDir, CURSORS_DIR), { recursive: true });
  await writeFileAtomic(cursorPath(channelDir, agent), `${seq}\n`);
  return seq;
}

/** Every cursor in the channel, by agent (files whose name is not a valid agent are ignored). */
export async function listCursors(channelDir: string): Promise<Record<string, number>> {
  let names: string[];
  try {
    names = await readdir(join(channelDir, CURSORS_DIR));
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return {};
    throw error;
  }
  const cursors: Record<string, number> = {};
  for (const name of names.sort()) {
    const agent = name.replace(/\.txt$/, "");
    if (name === agent || name.startsWith(".")) continue;
    try {
      cursors[agent] = (await readCursor(channelDir, agent)).seq;
    } catch {
      // Not a valid agent name: not ours to interpret.
    }
  }
  return cursors;
}
