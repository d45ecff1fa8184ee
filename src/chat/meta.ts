import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { errnoOf } from "../support/errors.js";
import * as z from "../support/zod.js";
import { metaInvalidError } from "./errors.js";

export const META_FILE = "_meta.json";

/** Governance (spec §9): how much say the maintainer has over one kind of action. */
export const APPROVAL_BANDS = ["auto", "notify", "approval-required"] as const;
export type ApprovalBand = (typeof APPROVAL_BANDS)[number];

const NamesSchema = z
  .union([z.array(z.string()), z.string()])
  .transform((value) =>
    (typeof value === "string" ? value.split(",") : value).map((name) => name.trim()).filter(Boolean),
  );

// Another tool's field of another type is read as text rather than refused.
const TextSchema = z
  .unknown()
  .transform((value) => (value === null || value === undefined ? "" : String(value)));

// The governance profile is informative in the spec, so other tools may name bands differently:
// a band caesar does not know is read as the strictest one (fail closed).
const BandSchema = z
  .string()
  .transform(
    (value): ApprovalBand =>
      (APPROVAL_BANDS as readonly string[]).includes(value) ? (value as ApprovalBand) : "approval-required",
  );

/**
 * `_meta.json`. The spec's fields (`channel`, `members`, `topic`, `created`) plus the optional
 * governance profile (`maintainer`, `approval_bands`, `veto_window_s`). Unknown keys written by other
 * tools are kept. Read leniently: `members` may be a comma string, `channel` defaults to the folder,
 * an unknown band reads as `approval-required`.
 */
export const ChannelMetaSchema = z.looseObject({
  channel: z.string().optional(),
  members: NamesSchema.optional(),
  topic: TextSchema.optional(),
  created: TextSchema.optional(),
  maintainer: z.string().min(1).optional(),
  approval_bands: z.record(z.string(), BandSchema).optional(),
  veto_window_s: z.number().positive().optional(),
});

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

/** Read and check `<dir>/_meta.json`; a malformed file is an error naming the file and the problem. */
export async function readMeta(dir: string, folderName: string): Promise<ChannelMeta> {
  const path = join(dir, META_FILE);
  let raw: string;
  try {
    raw = await readFile(path, "utf8");
  } catch (error) {
    if (errnoOf(error) === "ENOENT") throw metaInvalidError(path, "it is missing");
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (error) {
    throw metaInvalidError(path, `not JSON (${(error as Error).message})`);
  }
  const parsed = ChannelMetaSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw metaInvalidError(path, `${issue.path.join(".") || "the document"}: ${issue.message}`);
  }
  const value = parsed.data;
  return {
    ...value,
    channel: value.channel ?? folderName,
    members: value.members ?? [],
    topic: value.topic ?? "",
    created: value.created ?? "",
  };
}
