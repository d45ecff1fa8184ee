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
 * Check a parsed `_meta.json`, leniently: `members` may be a comma string, a missing `channel`
 * defaults to the folder's name, another tool's `topic` or `created` of another type is read as text,
 * and a band caesar does not know reads as `approval-required` (the governance profile is informative
 * in the spec, so other tools may name bands differently: fail closed). Written by hand rather than
 * with zod: every post reads this file, and loading zod would cost each `caesar chat` process more than
 * the rest of its start-up.
 */
export function normalizeMeta(json: unknown, folderName: string): ChannelMeta | string {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return "the document: not an object";
  const raw = json as Record<string, unknown>;
  const meta: ChannelMeta = { ...raw, channel: folderName, members: [], topic: "", created: "" };
  if (raw.channel !== undefined) {
    if (typeof raw.channel !== "string") return "channel: expected a string";
    meta.channel = raw.channel;
  }
  if (raw.members !== undefined) {
    const list = typeof raw.members === "string" ? raw.members.split(",") : raw.members;
    if (!Array.isArray(list) || list.some((name) => typeof name !== "string"))
      return "members: expected a list of names";
    meta.members = (list as string[]).map((name) => name.trim()).filter(Boolean);
  }
  meta.topic = asText(raw.topic);
  meta.created = asText(raw.created);
  if (raw.maintainer !== undefined) {
    if (typeof raw.maintainer !== "string" || raw.maintainer === "") return "maintainer: expected a name";
    meta.maintainer = raw.maintainer;
  }
  if (raw.approval_bands !== undefined) {
    const bands = raw.approval_bands;
    if (typeof bands !== "object" || bands === null || Array.isArray(bands))
      return "approval_bands: expected an object of action: band";
    meta.approval_bands = {};
    for (const [action, band] of Object.entries(bands)) {
      if (typeof band !== "string") return `approval_bands.${action}: expected a band name`;
      meta.approval_bands[action] = (APPROVAL_BANDS as readonly string[]).includes(band)
        ? (band as ApprovalBand)
        : "approval-required";
    }
  }
  if (raw.veto_window_s !== undefined) {
    if (typeof raw.veto_window_s !== "number" || !(raw.veto_window_s > 0))
      return "veto_window_s: expected a positive number of seconds";
    meta.veto_window_s = raw.veto_window_s;
  }
  return meta;
}

function asText(value: unknown): string {
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
