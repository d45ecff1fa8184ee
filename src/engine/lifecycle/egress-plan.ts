import type { AgentAdapter } from "../../agents/adapter.js";
import { modelHosts } from "../../agents/model-hosts.js";
import type { EffectiveConfig } from "../../config/effective.js";
import { parseHostRule } from "../../support/host-rules.js";

/**
 * The hosts a sandboxed agent reaches through caesar's egress proxy: always its model's (an agent without
 * its model does nothing — a task with no network still reaches it), and `[sandbox] allow_hosts` when the
 * task has the network. Read from the environment of whoever asked (a nested request's is its tree's
 * front end's, never the agent's: task-broker.ts) and from configuration the agent cannot write.
 */
export function egressHosts(
  adapter: Pick<AgentAdapter, "product">,
  network: boolean,
  config: Pick<EffectiveConfig, "sandbox">,
  env: NodeJS.ProcessEnv,
): string[] {
  // What the environment names is anyone's text: only the hosts a rule can say are kept (the proxy's
  // rules are parsed again where it starts, which must not fail).
  const hosts = modelHosts(adapter.product, env).filter((host) => typeof parseHostRule(host) !== "string");
  if (network) hosts.push(...config.sandbox.allow_hosts.value);
  return [...new Set(hosts)];
}

/**
 * The rule that lets a traced task's agent reach the OpenTelemetry collector caesar sends the task's spans to
 * (it is handed the trace, TRACEPARENT, to join): that URL's host and port only — its scheme's port when it
 * names none. Undefined when no rule can say it, or it would be a wildcard.
 */
export function collectorRule(tracesUrl: string): string | undefined {
  try {
    const url = new URL(tracesUrl);
    const rule = `${url.hostname}:${url.port || (url.protocol === "https:" ? "443" : "80")}`;
    const parsed = parseHostRule(rule);
    // One host: a URL's host may hold `*` (the URL parser takes it), which a rule reads as a wildcard.
    return typeof parsed === "string" || parsed.host.includes("*") ? undefined : rule;
  } catch {
    return undefined;
  }
}
