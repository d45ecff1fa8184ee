import type { AgentAdapter } from "../agents/adapter.js";
import { type EffectiveConfig, settingsOf } from "../config/effective.js";
import { CaesarError } from "../support/errors.js";

export interface Admission {
  allowed: boolean;
  /** Why, in one line, with where the deciding setting lives. */
  reason: string;
  /** The command that changes the decision. */
  remedy: string;
}

/** May this agent run at all in this project? (`[policy] allowed/denied`, `[agents.<id>] enabled`) */
export function admissionOf(config: EffectiveConfig, agentId: string): Admission {
  const { denied, allowed } = config.policy;
  const enabled = settingsOf(config, agentId).enabled;
  if (!enabled.value) {
    return {
      allowed: false,
      reason: `disabled ([agents.${agentId}] enabled = false, ${enabled.source} configuration)`,
      remedy: `caesar agents enable ${agentId}`,
    };
  }
  if (denied.value.includes(agentId)) {
    return {
      allowed: false,
      reason: `denied by [policy] denied (${denied.source} configuration)`,
      remedy: `caesar policy allow ${agentId}`,
    };
  }
  if (allowed.value.length > 0 && !allowed.value.includes(agentId) && agentId !== "reference") {
    return {
      allowed: false,
      reason: `not in [policy] allowed (${allowed.source} configuration)`,
      remedy: `caesar policy allow ${agentId}`,
    };
  }
  return {
    allowed: true,
    reason:
      allowed.value.length > 0
        ? `in [policy] allowed (${allowed.source})`
        : "allowed (no [policy] allowed list; not denied)",
    remedy: `caesar policy deny ${agentId}`,
  };
}

export function assertAdmitted(config: EffectiveConfig, adapter: AgentAdapter): void {
  const admission = admissionOf(config, adapter.id);
  if (!admission.allowed) {
    throw new CaesarError("agent_not_allowed", `Agent "${adapter.id}" may not run: ${admission.reason}.`, {
      detail: `Change it with \`${admission.remedy}\`.`,
    });
  }
}
