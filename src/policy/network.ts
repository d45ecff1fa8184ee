import type { AgentCapabilities } from "../agents/adapter.js";
import type { NetworkRequest } from "../config/schema.js";
import type { Finding } from "../protocol/report.js";
import type { Mode } from "../protocol/task.js";
import { CaesarError } from "../support/errors.js";

export interface NetworkResolution {
  /** What task.json says: false only when caesar knows the network is cut. */
  network: boolean;
  /** Findings to carry into the report (a guarantee that could not be given). */
  findings: Finding[];
}

/**
 * Network is a result, not a request (OACP): confront what was asked (`auto | on | off`) with what the
 * agent's adapter can really control in this mode.
 */
export function resolveNetwork(
  agentId: string,
  requested: NetworkRequest,
  mode: Mode,
  capabilities: AgentCapabilities,
): NetworkResolution {
  const control = capabilities.network.value;
  // Can caesar give this agent the network / take it away, in this mode?
  const canProvide =
    control === "toggle" || control === "open" || (control === "write-only" && mode === "write");
  const canCut = control === "toggle" || control === "none" || control === "write-only";
  const alwaysCut = control === "none" || (control === "write-only" && mode === "read-only");

  if (requested === "on") {
    if (!canProvide) {
      throw new CaesarError(
        "network_unavailable",
        `Agent "${agentId}" cannot have the network in ${mode} mode (network control: ${control} — ${capabilities.network.why}).`,
        {
          detail:
            control === "write-only"
              ? "Run it in write mode (--mode write), use --network auto or off, or pick an agent whose network can be opened."
              : "Use --network auto or off, or pick an agent that can reach the network.",
        },
      );
    }
    return { network: true, findings: [] };
  }
  if (requested === "off") {
    if (!canCut) {
      return {
        network: true,
        findings: [
          {
            severity: "medium",
            title: "Network could not be cut",
            detail: `--network off was requested, but caesar cannot confine "${agentId}" (${capabilities.network.why}). The agent ran with the network available.`,
          },
        ],
      };
    }
    return { network: false, findings: [] };
  }
  // auto: whatever the agent gets by default in this mode; false only where it is known to be cut.
  return { network: !alwaysCut, findings: [] };
}
