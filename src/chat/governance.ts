import { CaesarError } from "../support/errors.js";
import { formatTimestamp } from "./clock.js";
import { invalidArgumentError } from "./errors.js";
import type { ApprovalBand, ChannelMeta } from "./meta.js";

/**
 * The optional governance profile (spec §9): a channel's `maintainer`, per-action approval bands,
 * and the `needs-approval` → `approved` convention. Only the maintainer's `approved` or `vetoed`
 * counts, and caesar refuses to write either status for anyone else.
 */
export const NEEDS_APPROVAL = "needs-approval";
export const NOTIFY = "notify";
export const APPROVED = "approved";
export const VETOED = "vetoed";
const DECISIONS = new Set([APPROVED, VETOED]);
const ACTION = /^[a-z0-9][a-z0-9._-]{0,63}$/;

export interface GovernancePlan {
  action: string;
  band: ApprovalBand;
  /** The status the message must carry. */
  status: string;
  /** Extra frontmatter lines: `action`, and `veto_until` in the notify band. */
  extra: [string, string][];
  /** For a notify: the time after which the action may go ahead unless vetoed. */
  veto_until?: string;
  /** What the poster does next, in one sentence. */
  next: string;
}

/** The band of `action` in a channel: its own, else the `*` band, else auto. */
export function bandOf(meta: ChannelMeta, action: string): ApprovalBand {
  return meta.approval_bands?.[action] ?? meta.approval_bands?.["*"] ?? "auto";
}

/** Names compare exactly, as everywhere in agent-chat. */
export function isMaintainer(meta: ChannelMeta, agent: string): boolean {
  return meta.maintainer !== undefined && meta.maintainer === agent;
}

export function notMaintainerError(channel: string, agent: string, meta: ChannelMeta): CaesarError {
  const who = meta.maintainer === undefined ? "it has no maintainer" : `its maintainer is ${meta.maintainer}`;
  return new CaesarError(
    "not_maintainer",
    `${agent} cannot approve or veto in channel "${channel}": ${who}.`,
    {
      detail:
        meta.maintainer === undefined
          ? "Approvals exist only in governed channels (created with `caesar chat init <channel> --maintainer <agent>`)."
          : `Ask ${meta.maintainer} to run \`caesar chat approve ${channel} <seq> --as ${meta.maintainer}\`.`,
    },
  );
}

/** Refuse `approved`/`vetoed` from anyone but the maintainer of a governed channel. */
export function checkDecisionStatus(meta: ChannelMeta, from: string, status: string): void {
  if (meta.maintainer !== undefined && DECISIONS.has(status) && !isMaintainer(meta, from)) {
    throw notMaintainerError(meta.channel, from, meta);
  }
}

/** What posting about `action` requires in this channel; the status given by the poster is checked against it. */
export function planGovernance(
  meta: ChannelMeta,
  action: string,
  requestedStatus: string | undefined,
  now: Date,
): GovernancePlan {
  if (!ACTION.test(action))
    throw invalidArgumentError(
      `Invalid action ${JSON.stringify(action)}.`,
      "An action is a short lower-case word such as merge, deploy or delete (a-z, 0-9, '.', '_', '-').",
    );
  const band = bandOf(meta, action);
  const extra: [string, string][] = [["action", action]];
  if (band === "approval-required") {
    requireStatus(action, band, requestedStatus, NEEDS_APPROVAL);
    return {
      action,
      band,
      status: NEEDS_APPROVAL,
      extra,
      next: `Wait for ${meta.maintainer}'s \`approved\` reply before you ${action} (caesar chat wait).`,
    };
  }
  if (band === "notify") {
    requireStatus(action, band, requestedStatus, NOTIFY);
    const windowS = meta.veto_window_s ?? 0;
    const vetoUntil = formatTimestamp(new Date(now.getTime() + windowS * 1000));
    extra.push(["veto_until", vetoUntil]);
    return {
      action,
      band,
      status: NOTIFY,
      extra,
      veto_until: vetoUntil,
      next: `Go ahead with ${action} after ${vetoUntil} unless ${meta.maintainer} vetoes (wait up to ${windowS} s for a reply).`,
    };
  }
  return {
    action,
    band,
    status: requestedStatus ?? "discussion",
    extra,
    next: `${action} needs no approval.`,
  };
}

function requireStatus(
  action: string,
  band: ApprovalBand,
  requested: string | undefined,
  needed: string,
): void {
  if (requested !== undefined && requested !== needed)
    throw invalidArgumentError(
      `Action ${action} is in the ${band} band: its message must have status ${needed}, not ${requested}.`,
      `Drop --status (caesar sets ${needed}), or ask the maintainer to change approval_bands in _meta.json.`,
    );
}
