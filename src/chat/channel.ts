import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { formatTimestamp } from "./clock.js";
import type { ChatContext } from "./context.js";
import { channelExistsError, channelNotFoundError, invalidArgumentError } from "./errors.js";
import { syncDirectoryOf, writeFileExclusive } from "./exclusive-file.js";
import { type ApprovalBand, type ChannelMeta, META_FILE, parseMeta, readMetaText } from "./meta.js";
import { validateName } from "./names.js";

/** A channel known to exist: its name and folder. */
export interface ChannelRef {
  name: string;
  dir: string;
}

/** The channel `name` in the context's root; an error when it has no `_meta.json` (then it does not exist). */
export async function openChannel(ctx: ChatContext, name: string): Promise<ChannelRef> {
  return openChannelWithMeta(ctx, name).channel;
}

/** The channel and its metadata, read in one go (a post needs both). */
export function openChannelWithMeta(
  ctx: ChatContext,
  name: string,
): { channel: ChannelRef; meta: ChannelMeta } {
  validateName(name, "channel");
  const dir = join(ctx.root, name);
  const text = readMetaText(dir);
  if (text === undefined) throw channelNotFoundError(name, ctx.root);
  return { channel: { name, dir }, meta: parseMeta(text, dir, name) };
}

export interface InitOptions {
  members?: string[];
  topic?: string;
  /** Governance profile: the agent (or person) whose `approved` counts. */
  maintainer?: string;
  approvalBands?: Record<string, ApprovalBand>;
  vetoWindowS?: number;
}

/** The bands of a governed channel when none are given: merges need approval, the rest is automatic. */
export const DEFAULT_APPROVAL_BANDS: Record<string, ApprovalBand> = {
  merge: "approval-required",
  "*": "auto",
};
export const DEFAULT_VETO_WINDOW_S = 600;

/**
 * Create a channel: its folder (and the root) as needed, `.cursors/` as the reference does, then
 * `_meta.json`, created exclusively so that of several processes racing to create the same channel
 * exactly one succeeds.
 */
export async function initChannel(
  ctx: ChatContext,
  name: string,
  options: InitOptions = {},
): Promise<{ channel: ChannelRef; meta: ChannelMeta }> {
  validateName(name, "channel");
  const members = [...new Set((options.members ?? []).map((member) => validateName(member, "agent")))];
  const meta: ChannelMeta = {
    channel: name,
    members,
    topic: options.topic ?? "",
    created: formatTimestamp(ctx.now()),
  };
  if (options.maintainer !== undefined) {
    meta.maintainer = validateName(options.maintainer, "agent");
    meta.approval_bands = options.approvalBands ?? DEFAULT_APPROVAL_BANDS;
    meta.veto_window_s = options.vetoWindowS ?? DEFAULT_VETO_WINDOW_S;
  } else if (options.approvalBands !== undefined || options.vetoWindowS !== undefined) {
    throw invalidArgumentError(
      "Approval bands and a veto window need a maintainer.",
      "Add --maintainer <agent>: the governance profile is the maintainer's say over actions.",
    );
  }
  const dir = join(ctx.root, name);
  mkdirSync(join(dir, ".cursors"), { recursive: true });
  if (!writeFileExclusive(join(dir, META_FILE), `${JSON.stringify(meta, null, 2)}\n`))
    throw channelExistsError(name, ctx.root);
  // The channel's folder is a new name in the root: on disk too before the channel is reported made.
  syncDirectoryOf(dir, `The channel "${name}" was created`);
  return { channel: { name, dir }, meta };
}
