import { lstatSync, readdirSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { errnoOf } from "../support/errors.js";
import { openChannel } from "./channel.js";
import { formatTimestamp } from "./clock.js";
import type { ChatContext } from "./context.js";
import { syncDirectoryOf } from "./exclusive-file.js";
import { validateName } from "./names.js";
import { withSeqLock } from "./seq-lock.js";
import { claimedFileName, normalizeTaskMarker, parseClaimedFileName } from "./task-marker.js";

/**
 * Claims, as the reference implementation makes them: a claimable task is a marker file
 * `task-<id>.md` in the channel; claiming renames it to `task-<id>.CLAIMED-<agent slug>.md`. The
 * rename is atomic, so of any number of claimers exactly one moves the marker; the others find it gone
 * and lose. Like the reference, caesar claims under the channel's `_seq.lock`, so a claimer of either
 * tool also sees the other's finished claim before it tries.
 *
 * A claim fails (never "succeeds again") when the marker is already claimed — by another agent or by
 * the claimer itself — or when there is no such marker (it was never opened, or was claimed and
 * renamed). Older caesar versions recorded claims as `_claims/<marker>/claim.json` without a marker
 * file; such a claim still counts as taken.
 */
export const LEGACY_CLAIMS_DIR = "_claims";

export interface ClaimHolder {
  /** The holder's slug, as the claimed file's name carries it (its name for a legacy claim). */
  agent: string;
  /** When it was claimed (the claimed file's change time), ISO-8601. */
  ts: string;
}

export interface ClaimResult {
  channel: string;
  /** The task marker, `task-<id>.md`. */
  marker: string;
  /** True when `as` just took the marker. */
  claimed: boolean;
  /** Why the claim failed: the marker is held (`holder` says by whom), or there is no such marker. */
  reason?: "claimed" | "missing";
  /** The claimed file's name (`task-<id>.CLAIMED-<agent>.md`), when someone holds the marker. */
  file?: string;
  holder?: ClaimHolder;
}

export async function claimTask(
  ctx: ChatContext,
  channelName: string,
  rawMarker: string,
  options: { as: string },
): Promise<ClaimResult> {
  const marker = normalizeTaskMarker(rawMarker);
  const agent = validateName(options.as, "agent");
  const channel = await openChannel(ctx, channelName);
  const lost = (found: ClaimedTask | undefined): ClaimResult => ({
    channel: channel.name,
    marker,
    claimed: false,
    reason: found === undefined ? "missing" : "claimed",
    ...(found === undefined ? {} : { file: found.file, holder: found.holder }),
  });
  return withSeqLock(channel.dir, { staleMs: ctx.lockStaleMs }, () => {
    const legacy = findLegacyClaim(channel.dir, marker);
    if (legacy !== undefined) return lost(legacy);
    const target = claimedFileName(marker, agent);
    if (exists(join(channel.dir, target))) return lost(claimedTask(channel.dir, target));
    if (!isRegularFile(join(channel.dir, marker))) return lost(findClaim(channel.dir, marker));
    try {
      renameSync(join(channel.dir, marker), join(channel.dir, target));
    } catch (error) {
      // Taken by a claimer that did not wait for the lock (rename is the atomic step).
      if (errnoOf(error) === "ENOENT") return lost(findClaim(channel.dir, marker));
      throw error;
    }
    // Claimed for good only once the new name is on disk: after a power loss, a claim that was
    // reported must still be there, or a second agent could take the same task.
    syncDirectoryOf(join(channel.dir, target), `${marker} was claimed by ${agent} (${target})`);
    const holder = { agent: parseClaimedFileName(target)!.agent, ts: formatTimestamp(ctx.now()) };
    return { channel: channel.name, marker, claimed: true, file: target, holder };
  });
}

export interface ClaimedTask {
  marker: string;
  file: string;
  holder: ClaimHolder;
}

/** Who holds `marker`, when someone does (an older caesar's claim included). */
export function findClaim(channelDir: string, marker: string): ClaimedTask | undefined {
  const prefix = `${marker.slice(0, -".md".length)}.CLAIMED-`;
  const file = readdirSync(channelDir).find(
    (name) => name.startsWith(prefix) && parseClaimedFileName(name)?.marker === marker,
  );
  return file === undefined ? findLegacyClaim(channelDir, marker) : claimedTask(channelDir, file);
}

/** Every claim in a channel folder (`task-*.CLAIMED-*.md`, then legacy `_claims/`), by marker. */
export function listClaims(channelDir: string): ClaimedTask[] {
  const claims: ClaimedTask[] = [];
  for (const file of readdirSync(channelDir).sort()) {
    if (parseClaimedFileName(file) !== undefined) claims.push(claimedTask(channelDir, file));
  }
  return [...claims, ...listLegacyClaims(channelDir)];
}

function claimedTask(channelDir: string, file: string): ClaimedTask {
  const parsed = parseClaimedFileName(file)!;
  return {
    marker: parsed.marker,
    file,
    holder: { agent: parsed.agent, ts: changeTime(join(channelDir, file)) },
  };
}

function changeTime(path: string): string {
  try {
    return formatTimestamp(lstatSync(path).ctime);
  } catch {
    return "";
  }
}

/** A claim an older caesar made for this marker (`_claims/<id>`, `_claims/task-<id>` or `_claims/task-<id>.md`). */
function findLegacyClaim(channelDir: string, marker: string): ClaimedTask | undefined {
  const id = marker.slice("task-".length, -".md".length);
  for (const name of [id, `task-${id}`, marker]) {
    const claim = readLegacyClaim(channelDir, name, marker);
    if (claim !== undefined) return claim;
  }
  return undefined;
}

function listLegacyClaims(channelDir: string): ClaimedTask[] {
  let names: string[];
  try {
    names = readdirSync(join(channelDir, LEGACY_CLAIMS_DIR));
  } catch {
    return [];
  }
  return names
    .sort()
    .filter((name) => !name.startsWith("."))
    .map((name) => readLegacyClaim(channelDir, name, name))
    .filter((claim): claim is ClaimedTask => claim !== undefined);
}

function readLegacyClaim(channelDir: string, name: string, marker: string): ClaimedTask | undefined {
  const dir = join(channelDir, LEGACY_CLAIMS_DIR, name);
  if (!exists(dir)) return undefined;
  let holder: ClaimHolder = { agent: "?", ts: "" };
  try {
    const raw = JSON.parse(readFileSync(join(dir, "claim.json"), "utf8")) as Partial<ClaimHolder>;
    if (typeof raw.agent === "string")
      holder = { agent: raw.agent, ts: typeof raw.ts === "string" ? raw.ts : "" };
  } catch {
    // Damaged: the marker is taken all the same.
  }
  return { marker, file: join(LEGACY_CLAIMS_DIR, name), holder };
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function isRegularFile(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}
