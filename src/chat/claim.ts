import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { errnoOf } from "../support/errors.js";
import { randomHex } from "../support/random.js";
import { openChannel } from "./channel.js";
import { formatTimestamp } from "./clock.js";
import type { ChatContext } from "./context.js";
import { isValidName, validateName } from "./names.js";

/**
 * Claims: `_claims/<marker>/claim.json` in the channel. A claimer builds its own marker folder under a
 * hidden temp name (the claim file inside), then renames it to `_claims/<marker>`. Renaming a folder
 * onto an existing non-empty folder fails (ENOTEMPTY/EEXIST on POSIX, EPERM on Windows), so of any
 * number of racing claimers exactly one rename succeeds; the others observe the failure, and the
 * winner's name is in the file.
 */
export const CLAIMS_DIR = "_claims";
const CLAIM_FILE = "claim.json";

export interface ClaimHolder {
  agent: string;
  ts: string;
}

export interface ClaimResult {
  channel: string;
  marker: string;
  /** True when `as` holds the marker (just won it, or already held it). */
  claimed: boolean;
  /** True when `as` held it before this call. */
  already: boolean;
  /** Who holds it (undefined only if the holder's file cannot be read). */
  holder?: ClaimHolder;
}

export async function claimTask(
  ctx: ChatContext,
  channelName: string,
  rawMarker: string,
  options: { as: string },
): Promise<ClaimResult> {
  const marker = validateName(rawMarker, "task marker");
  const agent = validateName(options.as, "agent");
  const channel = await openChannel(ctx, channelName);
  const claims = join(channel.dir, CLAIMS_DIR);
  await mkdir(claims, { recursive: true });
  const mine: ClaimHolder = { agent, ts: formatTimestamp(ctx.now()) };
  const temp = join(claims, `.${marker}.${agent}.${process.pid}.${randomHex(4)}.tmp`);
  await mkdir(temp);
  const target = join(claims, marker);
  try {
    await writeFile(join(temp, CLAIM_FILE), `${JSON.stringify({ marker, ...mine }, null, 2)}\n`, {
      flush: true,
    });
    await rename(temp, target);
    return { channel: channel.name, marker, claimed: true, already: false, holder: mine };
  } catch (error) {
    if (!(await isTakenError(error, target))) throw error;
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
  const holder = await readHolder(target);
  const already = holder !== undefined && holder.agent === agent;
  return { channel: channel.name, marker, claimed: already, already, ...(holder ? { holder } : {}) };
}

async function isTakenError(error: unknown, target: string): Promise<boolean> {
  const code = errnoOf(error);
  if (code === "ENOTEMPTY" || code === "EEXIST" || code === "ENOTDIR") return true;
  if (code !== "EPERM") return false;
  // Windows answers EPERM when the target folder exists.
  return stat(target).then(
    () => true,
    () => false,
  );
}

async function readHolder(markerDir: string): Promise<ClaimHolder | undefined> {
  try {
    const raw = JSON.parse(await readFile(join(markerDir, CLAIM_FILE), "utf8")) as Partial<ClaimHolder>;
    if (typeof raw.agent === "string")
      return { agent: raw.agent, ts: typeof raw.ts === "string" ? raw.ts : "" };
  } catch {
    // Written by another tool, or damaged: the marker is taken all the same.
  }
  return undefined;
}

/** Every claim in a channel folder, by marker name. */
export async function listClaims(channelDir: string): Promise<(ClaimHolder & { marker: string })[]> {
  let names: string[];
  try {
    names = await readdir(join(channelDir, CLAIMS_DIR));
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return [];
    throw error;
  }
  const claims: (ClaimHolder & { marker: string })[] = [];
  for (const marker of names.sort()) {
    if (!isValidName(marker, "task marker")) continue;
    const holder = await readHolder(join(channelDir, CLAIMS_DIR, marker));
    claims.push({ marker, agent: holder?.agent ?? "?", ts: holder?.ts ?? "" });
  }
  return claims;
}
