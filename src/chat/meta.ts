import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod/mini";
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

/** Another tool's `topic` or `created` of another type (a number, null) is read as text. */
const lenientText = z.pipe(
  z.unknown(),
  z.transform((value) => (value === null || value === undefined ? "" : String(value))),
);

/**
 * `_meta.json`, checked leniently: `members` may be a comma string, a missing `channel` defaults to the
 * folder's name, and a band caesar does not know reads as `approval-required` (the governance profile
 * is informative in the spec, so other tools may name bands differently: fail closed). zod's "mini"
 * build: every `caesar chat` process reads this file, and the mini build costs its start-up next to
 * nothing (bench/chat), where zod's full build would cost more than the rest of it.
 */
const metaSchema = z.looseObject({
  channel: z.optional(z.string({ error: "expected a string" })),
  members: z.optional(
    z.pipe(
      z.union([z.string(), z.array(z.string())], { error: "expected a list of names" }),
      z.transform((members) =>
        (typeof members === "string" ? members.split(",") : members)
          .map((name) => name.trim())
          .filter(Boolean),
      ),
    ),
  ),
  topic: z.optional(lenientText),
  created: z.optional(lenientText),
  maintainer: z.optional(
    z.string({ error: "expected a name" }).check(z.minLength(1, { error: "expected a name" })),
  ),
  approval_bands: z.optional(
    z.record(
      z.string(),
      z.pipe(
        z.string({ error: "expected a band name" }),
        z.transform((band) =>
          (APPROVAL_BANDS as readonly string[]).includes(band) ? (band as ApprovalBand) : "approval-required",
        ),
      ),
      { error: "expected an object of action: band" },
    ),
  ),
  veto_window_s: z.optional(
    z
      .number({ error: "expected a positive number of seconds" })
      .check(z.positive({ error: "expected a positive number of seconds" })),
  ),
});

/** Check a parsed `_meta.json` (see metaSchema); a problem is returned as `field: what was expected`. */
export function normalizeMeta(json: unknown, folderName: string): ChannelMeta | string {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return "the document: not an object";
  const parsed = metaSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return `${issue.path.map(String).join(".") || "the document"}: ${issue.message}`;
  }
  const { channel, members, topic, created, maintainer, approval_bands, veto_window_s, ...rest } =
    parsed.data;
  const meta: ChannelMeta = {
    ...rest,
    channel: channel ?? folderName,
    members: members ?? [],
    topic: topic ?? "",
    created: created ?? "",
  };
  if (maintainer !== undefined) meta.maintainer = maintainer;
  if (approval_bands !== undefined) meta.approval_bands = approval_bands;
  if (veto_window_s !== undefined) meta.veto_window_s = veto_window_s;
  return meta;
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
