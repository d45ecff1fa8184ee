import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { errnoOf } from "../support/errors.js";
import { metaInvalidError } from "./errors.js";

export const META_FILE = "_meta.json";

/** Governance (spec §9): how much say the maintainer has over one kind of action. */
export const APPROVAL_BANDS = ["auto", "notify", "approval-required"] as const;
export type ApprovalBand = (typeof APPROVAL_BANDS)[number];

/**
 * `_meta.json`. The spec's fields (`channel`, `members`, `topic`, `created`) plus the optional
 * governance profile (`maintainer`, `approval_bands`, `veto_window_s`). Unknown keys written by other
 * tools are kept.
 */
export interface ChannelMeta {
  channel: string;
  members: string[];
  topic: string;
  created: string;
  maintainer?: string;
  approval_bands?: Record<string, ApprovalBand>;
  veto_window_s?: number;
  [key: string]: unknown;
}

/**
 * Check a parsed `_meta.json`, leniently: `members` may be a comma string, a missing `channel` defaults
 * to the folder's name, `topic` and `created` of another type (a number, null) read as text, unknown keys
 * are kept, and a band caesar does not know reads as `approval-required` (the governance profile is
 * informative in the spec, so other tools may name bands differently: fail closed). A problem is
 * returned as `field: what was expected`.
 *
 * Checked by hand, not with a zod schema as elsewhere: every `caesar chat` process reads this file, and
 * loading zod and building the schema cost each one ≈ 9 ms of CPU (bench/chat), about a quarter of
 * caesar's own share of a post.
 */
export function normalizeMeta(json: unknown, folderName: string): ChannelMeta | string {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return "the document: not an object";
  const { channel, members, topic, created, maintainer, approval_bands, veto_window_s, ...rest } =
    json as Record<string, unknown>;
  if (channel !== undefined && typeof channel !== "string") return "channel: expected a string";
  const names = membersOf(members);
  if (names === undefined) return "members: expected a list of names";
  if (maintainer !== undefined && (typeof maintainer !== "string" || maintainer === ""))
    return "maintainer: expected a name";
  const bands = bandsOf(approval_bands);
  if (typeof bands === "string") return bands;
  if (
    veto_window_s !== undefined &&
    !(typeof veto_window_s === "number" && Number.isFinite(veto_window_s) && veto_window_s > 0)
  )
    return "veto_window_s: expected a positive number of seconds";
  const meta: ChannelMeta = {
    ...rest,
    channel: channel ?? folderName,
    members: names,
    topic: lenientText(topic),
    created: lenientText(created),
  };
  if (maintainer !== undefined) meta.maintainer = maintainer;
  if (bands !== undefined) meta.approval_bands = bands;
  if (veto_window_s !== undefined) meta.veto_window_s = veto_window_s;
  return meta;
}

/** Members as a list or a comma string (chat.py writes either), trimmed, without empty names. */
function membersOf(value: unknown): string[] | undefined {
  if (value === undefined) return [];
  const list = typeof value === "string" ? value.split(",") : value;
  if (!Array.isArray(list) || !list.every((name) => typeof name === "string")) return undefined;
  return list.map((name) => name.trim()).filter(Boolean);
}

function bandsOf(value: unknown): Record<string, ApprovalBand> | string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return "approval_bands: expected an object of action: band";
  const bands: Record<string, ApprovalBand> = {};
  for (const [action, band] of Object.entries(value)) {
    if (typeof band !== "string") return `approval_bands.${action}: expected a band name`;
    // A data property even for an action named `__proto__`, as JSON.parse made it.
    Object.defineProperty(bands, action, {
      value: (APPROVAL_BANDS as readonly string[]).includes(band) ? band : "approval-required",
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return bands;
}

function lenientText(value: unknown): string {
  return value === null || value === undefined ? "" : String(value);
}

/** Parse the text of `<dir>/_meta.json`; a malformed file is an error naming the file and the problem. */
export function parseMeta(text: string, dir: string, folderName: string): ChannelMeta {
  const path = join(dir, META_FILE);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw metaInvalidError(path, `not JSON (${(error as Error).message})`);
  }
  const meta = normalizeMeta(json, folderName);
  if (typeof meta === "string") throw metaInvalidError(path, meta);
  return meta;
}

// Never through a symbolic link: a channel is a folder holding its own `_meta.json`.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);

/**
 * The text of `<dir>/_meta.json`, or undefined when the folder is no channel (no such file, or not a
 * regular file). One open, synchronous: every post starts here.
 */
export function readMetaText(dir: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(join(dir, META_FILE), READ_FLAGS);
  } catch (error) {
    const code = errnoOf(error);
    if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP") return undefined;
    throw error;
  }
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

/** Read and check `<dir>/_meta.json`; a missing or malformed file is an error naming it. */
export async function readMeta(dir: string, folderName: string): Promise<ChannelMeta> {
  const text = readMetaText(dir);
  if (text === undefined) throw metaInvalidError(join(dir, META_FILE), "it is missing");
  return parseMeta(text, dir, folderName);
}
