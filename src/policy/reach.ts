import type { AgentAdapter } from "../agents/adapter.js";
import type { EffectiveConfig } from "../config/effective.js";
import { admissionOf } from "./admission.js";
import {
  type CallerTask,
  type DelegationDecision,
  DelegationRefusedError,
  decideDelegation,
} from "./delegation.js";

/** May this caller hand work to this agent now — and if not, why, and what would change it. */
export interface Reach {
  allowed: boolean;
  reason: string | null;
  remedy: string | null;
  /** For a task asking: what the request would be (a spawn or a delegation, bounded or independent). */
  delegation: DelegationDecision | null;
}

/**
 * The roster as the policy sees it, from one source with admission: a person reaches every agent the
 * policy admits; a task reaches what the delegation rules let it (depth, the recursion gate and spawn cap,
 * its risk profile's delegation_policy, reachability) — the same decisions `caesar run` would take.
 */
export function reachOf(
  config: EffectiveConfig,
  caller: CallerTask | undefined,
  target: AgentAdapter,
): Reach {
  const admission = admissionOf(config, target.id);
  if (!admission.allowed)
    return { allowed: false, reason: admission.reason, remedy: admission.remedy, delegation: null };
  if (!caller) return { allowed: true, reason: null, remedy: null, delegation: null };
  try {
    return {
      allowed: true,
      reason: null,
      remedy: null,
      delegation: decideDelegation(config, caller, target),
    };
  } catch (error) {
    if (!(error instanceof DelegationRefusedError)) throw error;
    return { allowed: false, reason: error.message, remedy: error.detail, delegation: null };
  }
}
