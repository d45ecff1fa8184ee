import type { AgentAdapter } from "../agents/adapter.js";
import { type DelegateTarget, type EffectiveConfig, riskProfileOf, settingsOf } from "../config/effective.js";
import { CaesarError, type ThrownCode } from "../support/errors.js";

/**
 * The kinds of nested request (docs/configuration.md, "Governed delegation"): re-running the **same** agent product for a focused sub-task
 * (`spawn`, capped at one level: a spawned task cannot spawn) versus handing off to a **different**
 * configured agent (`delegate`, gated by the caller's risk profile and reachability).
 */
export type DelegationKind = "root" | "spawn" | "delegate";

export interface CallerTask {
  id: string;
  agent: string;
  /** The caller's product (codex, claude, …: the adapter's `product`). */
  product: string;
  depth: number;
  kind: DelegationKind;
}

export interface DelegationDecision {
  kind: Exclude<DelegationKind, "root">;
  /** Bounded children never exceed their parent and share its budget; independent ones have their own. */
  mode: "bounded" | "independent";
}

export class DelegationRefusedError extends CaesarError {
  constructor(code: ThrownCode, summary: string, detail: string) {
    super(code, summary, { detail });
    this.name = "DelegationRefusedError";
  }
}

/**
 * Said with every refusal of a spawn by default: the delegation reference makes its spawn available by
 * default, caesar does not, on purpose (docs/departures.md).
 */
const SPAWN_DEFAULT_DEPARTURE =
  "(Off by default on purpose, unlike the delegation runtime OACP follows, whose spawn_subagent is on: a spawn runs the same agent CLI again, with the same credentials and bill, so caesar asks you to opt in — see docs/departures.md.)";

/**
 * Decide whether the task `caller` may hand work to `target`, in the documented order: depth, then
 * (same product) the recursion gate and the depth-1 spawn cap, or (different agent) the caller's
 * delegation policy then reachability. Every refusal names its cause and the setting that lifts it.
 */
export function decideDelegation(
  config: EffectiveConfig,
  caller: CallerTask,
  target: AgentAdapter,
): DelegationDecision {
  checkDepth(config, caller);
  if (target.product === caller.product) {
    const recursion = config.policy.allow_recursion;
    if (!recursion.value) {
      throw new DelegationRefusedError(
        "recursion_refused",
        `spawn refused — "${caller.agent}" may not run "${target.id}", the same agent (${target.product}), under itself.`,
        `[policy] allow_recursion is false (${recursion.source} configuration); set [policy] allow_recursion = true to let an agent re-run itself for a focused sub-task, or delegate to a different agent. ${SPAWN_DEFAULT_DEPARTURE}`,
      );
    }
    if (caller.kind === "spawn") {
      throw new DelegationRefusedError(
        "spawn_depth_cap",
        "spawn refused — a spawned task may not spawn its own sub-tasks (depth-1 cap).",
        `Task ${caller.id} was itself spawned by its parent. Delegate to a different agent instead, or do the work in ${caller.id}.`,
      );
    }
    return { kind: "spawn", mode: "bounded" };
  }

  const callerSettings = settingsOf(config, caller.agent);
  const profileName = callerSettings.risk_profile.value;
  const profile = riskProfileOf(config, profileName);
  if (profile.delegation_mode.value !== "allow") {
    throw new DelegationRefusedError(
      "delegation_forbidden",
      `delegation is forbidden for caller "${caller.agent}" by risk profile "${profileName}" delegation_policy; set [risk_profiles.${profileName}].delegation_policy mode = "allow"`,
      `The policy comes from the ${profile.delegation_mode.source} configuration. Until it allows delegation, ${caller.agent} may only work itself.`,
    );
  }
  const mode = reachability(config, caller.agent, profileName, target.id);
  if (mode === "independent") refuseAlwaysAsk(config, caller.agent, target.id);
  return { kind: "delegate", mode };
}

/**
 * An independent target whose risk profile lists `always_ask` tools is refused, with the delegation
 * reference's words: it runs under its own policy, headless, and nobody could be asked. (A bounded one is
 * not: it runs within its caller's envelope, as the reference's does.)
 */
function refuseAlwaysAsk(config: EffectiveConfig, caller: string, target: string): void {
  const profileName = settingsOf(config, target).risk_profile.value;
  const alwaysAsk = riskProfileOf(config, profileName).always_ask;
  if (alwaysAsk.value.length === 0) return;
  throw new DelegationRefusedError(
    "delegate_always_ask",
    `delegate target "${target}" cannot run in independent mode from "${caller}": risk profile "${profileName}" has always_ask entries (${alwaysAsk.value.join(", ")}). See ZeroClaw docs, "Delegation & SubAgents" > "What's not supported".`,
    `(The delegation runtime OACP follows says so in these words.) An independent delegate runs headless under its own policy, so nobody can approve what always_ask lists. List "${target}" as bounded in [agents.${caller}].delegates, remove the always_ask entries of [risk_profiles.${profileName}] (${alwaysAsk.source} configuration), or delegate to another agent — see "Governed delegation" in caesar's docs/configuration.md. Nothing was started.`,
  );
}

/**
 * The depth of a task nobody's task asked for: its caller — a person, the main agent (over MCP or the
 * command line), CI — is depth 0, as the delegation reference's main agent is.
 */
export const FIRST_TASK_DEPTH = 1;

/**
 * Depth grows by one on every path; `[policy] max_depth` (default 3) caps it as the reference's
 * `max_delegation_depth` does: a caller at depth `d` may delegate while `d < max_depth`, so `max_depth = 1`
 * is one hop — the main agent delegates, its delegates do not.
 */
export function checkDepth(config: EffectiveConfig, caller: Pick<CallerTask, "id" | "depth">): void {
  const max = config.policy.max_depth;
  if (caller.depth >= max.value) {
    throw new DelegationRefusedError(
      "delegation_depth",
      `Delegation depth limit reached (${caller.depth}/${max.value}).`,
      `Task ${caller.id} runs at depth ${caller.depth} (the main agent is 0, the task it started 1); [policy] max_depth is ${max.value} (${max.source} configuration), the number of hops from the main agent. Raise it, or do the work in ${caller.id} itself.`,
    );
  }
}

function reachability(
  config: EffectiveConfig,
  caller: string,
  callerProfile: string,
  target: string,
): "bounded" | "independent" {
  const targetSettings = settingsOf(config, target);
  const prefix = `delegate target "${target}" is not reachable from "${caller}"`;
  if (!targetSettings.enabled.value) {
    throw new DelegationRefusedError(
      "delegate_unreachable",
      `${prefix}: the target agent is disabled`,
      `Enable it with \`caesar agents enable ${target}\` (disabled agents are never reachable).`,
    );
  }
  const callerSettings = settingsOf(config, caller);
  const explicit: DelegateTarget | undefined = callerSettings.delegates.value.find(
    (entry) => entry.agent === target,
  );
  if (explicit) return explicit.mode;
  const targetProfile = targetSettings.risk_profile.value;
  if (callerSettings.delegate_same_risk_profile.value) {
    if (targetProfile === callerProfile) return "bounded";
    throw new DelegationRefusedError(
      "delegate_unreachable",
      `${prefix}: different risk profile (caller uses "${callerProfile}", target uses "${targetProfile}"). delegate_same_risk_profile only reaches agents with the same risk profile; add an explicit [agents.${caller}].delegates entry with the intended mode, or change one agent's risk_profile.`,
      `For example: [agents.${caller}] delegates = ["${target}"] (bounded), or [{ agent = "${target}", mode = "independent" }].`,
    );
  }
  throw new DelegationRefusedError(
    "delegate_unreachable",
    `${prefix}: delegate_same_risk_profile is disabled and the target is not listed in [agents.${caller}].delegates`,
    `Add it: [agents.${caller}] delegates = ["${target}"], or set delegate_same_risk_profile = true.`,
  );
}
