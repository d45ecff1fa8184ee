import { UsageError } from "../support/errors.js";
import { slugify } from "./names.js";

/**
 * Task markers, the reference implementation's convention: a claimable task is a file
 * `task-<id>.md` in the channel (`<id>`: a letter or digit, then letters, digits, `_` or `-`), and
 * its claim renames it to `task-<id>.CLAIMED-<agent slug>.md`.
 */
const MARKER = /^task-[A-Za-z0-9][A-Za-z0-9_-]*\.md$/;
const ID = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
const CLAIMED = /^(task-[A-Za-z0-9][A-Za-z0-9_-]*)\.CLAIMED-(.+)\.md$/;

/**
 * The marker file's name from what a user types: the file name itself (`task-12.md`, as the reference
 * takes it), or `task-12`, or the bare id `12` / `fix-login`. Anything else — `_meta.json`, a message
 * file, a path — is refused, so a claim can only ever rename a task marker.
 */
export function normalizeTaskMarker(raw: string): string {
  if (MARKER.test(raw)) return raw;
  if (MARKER.test(`${raw}.md`)) return `${raw}.md`;
  if (ID.test(raw) && !raw.startsWith("task-")) return `task-${raw}.md`;
  throw new UsageError("invalid_task", `Invalid task marker ${JSON.stringify(raw)}.`, {
    detail:
      "A task marker is a file task-<id>.md in the channel (the id: letters, digits, '_' and '-'); give task-12.md, task-12 or 12.",
  });
}

/** `task-<id>.CLAIMED-<agent slug>.md`. */
export function claimedFileName(marker: string, agent: string): string {
  return `${marker.slice(0, -".md".length)}.CLAIMED-${slugify(agent)}.md`;
}

/** The marker and the holder's slug of a claimed file's name, or undefined for any other name. */
export function parseClaimedFileName(name: string): { marker: string; agent: string } | undefined {
  const match = CLAIMED.exec(name);
  return match ? { marker: `${match[1]}.md`, agent: match[2]! } : undefined;
}

/** Is `name` an open task marker's file name? */
export function isTaskMarker(name: string): boolean {
  return MARKER.test(name);
}
