import type { ServiceStatus } from "../engine/conductor/service-files.js";
import type { TelemetrySettings } from "../support/telemetry/settings.js";
import type { AgentSummary } from "./agent-summary.js";
import { describeService } from "./service-line.js";

interface DoctorResult {
  root: string;
  node: string;
  repository: { kind: string; top?: string; message?: string };
  files: { layer: string; path: string; present: boolean }[];
  service: ServiceStatus | null;
  sandbox: {
    mode: string;
    mode_from: string;
    backend: string | null;
    detail: string;
    allow_hosts: string[];
    allow_hosts_from: string;
    mask_keys: boolean;
    /** socat, which serves the egress proxy inside a sandbox; null: a relay of Node's own does. */
    relay: string | null;
    /**
     * The machine's own proxy the egress proxy goes through: for tunnels (HTTPS_PROXY…) and plain http
     * (HTTP_PROXY), each its variable, host and port (null: none), and why a variable set cannot be used.
     */
    upstream_proxy: { tunnels: string | null; requests: string | null; problems: string[] };
  };
  telemetry: { settings: TelemetrySettings | null; problem: string | null };
  agents: (AgentSummary & { model_hosts: string[]; masked_keys: string[] })[];
}

export function renderDoctor(result: DoctorResult): string {
  const lines: string[] = [];
  lines.push(`project   ${result.root}`);
  lines.push(`node      ${result.node}`);
  const repo = result.repository;
  lines.push(
    `git       ${
      repo.kind === "usable"
        ? `repository at ${repo.top} — tasks get worktrees`
        : repo.kind === "empty"
          ? `repository at ${repo.top} without commits — tasks run in place (commit once for worktrees)`
          : repo.kind === "none"
            ? "not a git repository — tasks run in place and their changes cannot be verified"
            : `unavailable: ${repo.message}`
    }`,
  );
  for (const file of result.files)
    lines.push(`config    ${file.layer.padEnd(8)} ${file.path}${file.present ? "" : "  (absent)"}`);
  lines.push(`service   ${describeService(result.service)}`);
  lines.push(`sandbox   ${describeSandbox(result.sandbox)}`);
  if (result.sandbox.mode !== "off" && result.sandbox.backend)
    lines.push(`network   ${describeEgress(result.sandbox)}`);
  lines.push(`traces    ${describeTelemetry(result.telemetry)}`);
  for (const agent of result.agents) {
    lines.push("");
    const installed = agent.detection.installed
      ? `installed${agent.detection.version ? ` ${agent.detection.version}` : ""}${agent.detection.path ? ` (${agent.detection.path})` : ""}`
      : "not installed";
    const verified = agent.capabilities.unverified
      ? "unverified: no binary could be run to check these capabilities"
      : agent.capabilities.verifiedOn
        ? `capabilities verified on ${agent.capabilities.verifiedOn}`
        : "";
    const kind = agent.protocol === "acp" ? `${agent.kind}, ACP` : agent.kind;
    lines.push(`${agent.id} — ${agent.display_name} (${kind}): ${installed}`);
    if (agent.detection.warning) lines.push(`  warning: ${agent.detection.warning}`);
    lines.push(
      `  ${agent.admission.allowed ? "allowed" : "NOT allowed"}: ${agent.admission.reason} — change with \`${agent.admission.remedy}\``,
    );
    if (verified) lines.push(`  ${verified}`);
    const caps = agent.capabilities;
    // Under caesar's sandbox the kernel decides both, whatever the agent does by itself.
    if (result.sandbox.mode !== "off" && result.sandbox.backend !== null) {
      lines.push(
        `  network      ${"proxied".padEnd(10)} caesar's sandbox: only the hosts below, through its egress proxy (by itself: ${caps.network.value}, ${caps.network.why})`,
      );
      lines.push(
        `  read-only    ${"os".padEnd(10)} caesar's sandbox: the kernel refuses every write to the workspace of a read-only task (by itself: ${caps.readOnly.value}, ${caps.readOnly.why})`,
      );
    } else {
      lines.push(`  network      ${caps.network.value.padEnd(10)} ${caps.network.why}`);
      lines.push(`  read-only    ${caps.readOnly.value.padEnd(10)} ${caps.readOnly.why}`);
    }
    lines.push(`  schema       ${String(caps.nativeSchema.value).padEnd(10)} ${caps.nativeSchema.why}`);
    lines.push(`  tools        ${caps.tools.value.padEnd(10)} ${caps.tools.why}`);
    lines.push(`  mcp          ${String(caps.mcp.value).padEnd(10)} ${caps.mcp.why}`);
    lines.push(`  resume       ${String(caps.resume.value).padEnd(10)} ${caps.resume.why}`);
    lines.push(`  model        ${String(caps.model.value).padEnd(10)} ${caps.model.why}`);
    lines.push(...describeAgentSandbox(agent, result.sandbox));
  }
  return lines.join("\n");
}

/**
 * What an agent may write under caesar's sandbox: the same for every agent (its workspace, its task
 * directory, a private /tmp), plus its CLI's home of the task's, and whether its own sandbox stays on.
 */
function describeAgentSandbox(
  agent: AgentSummary & { model_hosts: string[]; masked_keys: string[] },
  sandbox: DoctorResult["sandbox"],
): string[] {
  const applies = sandbox.mode !== "off" && sandbox.backend !== null;
  const when = applies ? "writable" : "writable once caesar's sandbox runs";
  const own = agent.sandbox
    ? [
        `<task dir>/${agent.sandbox.home} (${agent.sandbox.variables.join(", ")})`,
        "<task dir>/runtime/xdg (XDG_CACHE_HOME, XDG_STATE_HOME)",
      ]
    : [];
  const writable = [
    "its workspace (write tasks; a worktree's registration in git for its commits)",
    "its task directory",
    "a private /tmp",
    ...own,
  ];
  const lines = [`  sandbox      ${when}: ${writable.join("; ")}`];
  lines.push(
    agent.model_hosts.length > 0
      ? `  reaches      ${agent.model_hosts.join(", ")} (its model, even with the network off), through caesar's egress proxy`
      : "  reaches      no host of its own: only [sandbox] allow_hosts, when its task has the network",
  );
  if (agent.masked_keys.length > 0)
    lines.push(
      sandbox.mask_keys
        ? `  keys         ${"masked".padEnd(10)} ${agent.masked_keys.join(", ")}: a placeholder inside; caesar puts the key back on the way to its provider`
        : `  keys         ${"readable".padEnd(10)} ${agent.masked_keys.join(", ")}: in its environment ([sandbox] mask_keys = false)`,
    );
  if (agent.sandbox)
    lines.push(`  own sandbox  ${agent.sandbox.own.value.padEnd(10)} ${agent.sandbox.own.why}`);
  return lines;
}

/** Where the tasks this command would start send their spans (docs/observability.md). */
function describeTelemetry(telemetry: DoctorResult["telemetry"]): string {
  const { settings, problem } = telemetry;
  if (settings)
    return `OpenTelemetry spans to ${settings.traces_url} (${settings.protocol}), service.name ${settings.service_name}`;
  return (
    problem ??
    "off — set OTEL_EXPORTER_OTLP_ENDPOINT or [telemetry] endpoint to send traces (docs/observability.md)"
  );
}

/** What a sandboxed agent reaches besides its model, and what relays the proxy inside. */
function describeEgress(sandbox: DoctorResult["sandbox"]): string {
  const hosts =
    sandbox.allow_hosts.length > 0 ? sandbox.allow_hosts.join(", ") : "nothing (allow_hosts = [])";
  const relay = sandbox.relay
    ? `relayed by ${sandbox.relay}`
    : "relayed by a Node process per task (install socat for a lighter one)";
  const { tunnels, requests, problems } = sandbox.upstream_proxy;
  const chained =
    tunnels || requests
      ? `; allowed hosts are reached through the machine's proxy — tunnels through ${tunnels ?? "none (directly)"}, plain http through ${requests ?? "none (directly)"} — except the host's loopback and what NO_PROXY names (as this environment names them: the conductor service reads its own, the environment of the command that started it)`
      : "";
  const upstream = problems.map(
    (problem) => `; WARNING: ${problem} — until it is, sandboxed agents cannot reach hosts it would carry`,
  );
  return `no network of the host's inside the sandbox: each agent reaches its model through caesar's egress proxy and, when its task has the network, [sandbox] allow_hosts (${sandbox.allow_hosts_from}): ${hosts}; ${relay}${chained}${upstream.join("")}`;
}

/** What the OS sandbox does here: its mode, and what it enforces (or why there is none). */
function describeSandbox(sandbox: DoctorResult["sandbox"]): string {
  const mode = `[sandbox] mode = "${sandbox.mode}" (${sandbox.mode_from})`;
  if (sandbox.mode === "off")
    return `off — ${mode}; agents run unsandboxed. Here it could be: ${sandbox.backend ?? `none (${sandbox.detail})`}`;
  if (!sandbox.backend)
    return `NONE can run here: ${sandbox.detail} — ${mode}: ${sandbox.mode === "required" ? "every task is refused" : "tasks run unsandboxed, each with a high finding"}`;
  return `${sandbox.backend}, ${sandbox.detail} — ${mode}. Enforced by the kernel: writes only in the workspace (none in a read-only task) and the task directory; caesar's records, other tasks and credential folders out of reach; the network only through caesar's egress proxy; other processes invisible`;
}
