import type { AgentAdapter, Detection } from "../agents/adapter.js";
import { type EffectiveConfig, type Sourced, settingsOf } from "../config/effective.js";
import { type Admission, admissionOf } from "../policy/admission.js";
import type { CallerTask } from "../policy/delegation.js";
import { type Reach, reachOf } from "../policy/reach.js";

export interface AgentSummary {
  id: string;
  display_name: string;
  kind: AgentAdapter["kind"];
  /** How caesar talks with it: `oacp` (its files and output) or `acp` (a session over stdio). */
  protocol: "oacp" | "acp";
  product: string;
  detection: Detection;
  admission: Admission;
  /** May the caller delegate to it: the policy's admission, and from inside a task the delegation rules. */
  reach: Reach;
  enabled: Sourced<boolean>;
  risk_profile: Sourced<string>;
  model: Sourced<string> | null;
  capabilities: AgentAdapter["capabilities"];
  /** What its CLI writes under caesar's OS sandbox beyond its workspace and task directory; null: nothing. */
  sandbox: AgentAdapter["sandbox"] | null;
}

/** What `agents list` and `doctor` say about each agent; detection runs in parallel. */
export async function summarizeAgents(
  config: EffectiveConfig,
  adapters: AgentAdapter[],
  caller?: CallerTask,
): Promise<AgentSummary[]> {
  return Promise.all(
    adapters.map(async (adapter) => {
      const settings = settingsOf(config, adapter.id);
      let detection: Detection;
      try {
        detection = await adapter.detect();
      } catch (error) {
        detection = { installed: false, warning: (error as Error).message };
      }
      return {
        id: adapter.id,
        display_name: adapter.displayName,
        kind: adapter.kind,
        protocol: adapter.protocol ?? "oacp",
        product: adapter.product,
        detection,
        admission: admissionOf(config, adapter.id),
        reach: reachOf(config, caller, adapter),
        enabled: settings.enabled,
        risk_profile: settings.risk_profile,
        model: config.models[adapter.id] ?? null,
        capabilities: adapter.capabilities,
        sandbox: adapter.sandbox ?? null,
      };
    }),
  );
}
