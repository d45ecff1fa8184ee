import { findExecutable } from "../../support/executable-path.js";
import type { AgentCapabilities, LaunchContext, SessionAgentAdapter } from "../adapter.js";
import { claudeAdapter, claudeSandboxHome } from "../claude.js";
import { codexAdapter, codexSandboxHome } from "../codex.js";
import { copilotAdapter, copilotChannelArgs, copilotSandboxHome } from "../copilot.js";
import { geminiAdapter, geminiSandboxHome } from "../gemini.js";
import { opencodeAdapter, opencodeSandboxHome } from "../opencode.js";
import { rec } from "../stream-json.js";
import { tomlValue } from "../toml-value.js";
import { detectCli } from "../version.js";
import { ACP_MCP, ACP_NATIVE_SCHEMA, ACP_RESUME, makeAcpAdapter } from "./acp-adapter.js";
import { detectFromPackage } from "./detect.js";

/**
 * The built-in ACP modes of the five CLIs (verified against `caesar mock-model`, see docs/acp.md). Each
 * is configured so that the agent asks before every command and edit, and caesar's permission policy
 * answers: that is what enforces read-only, whatever the CLI's own modes would do.
 */

const POLICY_READ_ONLY: AgentCapabilities["readOnly"] = {
  value: "policy",
  why: "the agent asks before every command and edit, and caesar's policy refuses edits and any command not provably read-only",
};
const NO_TOOLS: AgentCapabilities["tools"] = {
  value: "none",
  why: "not wired for ACP: tools are judged one call at a time by caesar's permission policy",
};

function verified(version: string): Pick<AgentCapabilities, "verifiedOn" | "verifiedRange"> {
  return { verifiedOn: version, verifiedRange: { min: version, max: version } };
}

const GEMINI = "0.61.0";
export const geminiAcpAdapter: SessionAgentAdapter = makeAcpAdapter({
  id: "gemini-acp",
  displayName: "Gemini CLI (ACP)",
  kind: "builtin",
  product: "gemini",
  bin: "gemini",
  capabilities: {
    network: { value: "open", why: "gemini has no network switch for its commands" },
    readOnly: POLICY_READ_ONLY,
    tools: NO_TOOLS,
    nativeSchema: ACP_NATIVE_SCHEMA,
    mcp: ACP_MCP,
    resume: ACP_RESUME,
    model: { value: true, why: "-m <model>" },
    ...verified(GEMINI),
  },
  // Reads stay gemini's own: 0.61.0 rejects a client's error as a plain object, so a file that does not
  // exist yet reads as an error instead of "missing" and can never be created through the client.
  fs: { read: false, write: true },
  modelByConfigOption: false,
  command(launch) {
    // --approval-mode default: ask for every command and edit, whatever the user's settings say.
    // --skip-trust: an untrusted folder would change the approval mode on its own.
    const args = ["--acp", "--approval-mode", "default", "--skip-trust"];
    if (launch.model) args.push("-m", launch.model);
    for (const dir of launch.extraDirs) args.push("--include-directories", dir);
    return { args, env: {} };
  },
  sandboxHome: geminiSandboxHome,
  sandbox: geminiAdapter.sandbox,
  detect: (env) => detectCli({ bin: "gemini", verifiedRange: { min: GEMINI, max: GEMINI } }, env),
});

const OPENCODE = "1.18.33";
export const opencodeAcpAdapter: SessionAgentAdapter = makeAcpAdapter({
  id: "opencode-acp",
  displayName: "OpenCode (ACP)",
  kind: "builtin",
  product: "opencode",
  bin: "opencode",
  capabilities: {
    network: { value: "open", why: "opencode has no sandbox and no network switch" },
    readOnly: POLICY_READ_ONLY,
    tools: NO_TOOLS,
    nativeSchema: ACP_NATIVE_SCHEMA,
    mcp: ACP_MCP,
    resume: ACP_RESUME,
    model: { value: true, why: "`model` in OPENCODE_CONFIG_CONTENT" },
    ...verified(OPENCODE),
  },
  fs: { read: true, write: true },
  modelByConfigOption: false,
  command(launch) {
    const config = {
      ...inheritedOpencodeConfig(launch),
      // Every tool asks (opencode allows most by default), so caesar's policy decides each call.
      permission: { "*": "ask" },
      // caesar's worktree and git are the record; opencode's own snapshot would copy the project.
      snapshot: false,
      ...(launch.model ? { model: launch.model } : {}),
    };
    // opencode takes its project directory from $PWD, not from its working directory (1.18).
    return {
      args: ["acp"],
      env: { OPENCODE_CONFIG_CONTENT: JSON.stringify(config), PWD: launch.task.workspace },
    };
  },
  sandboxHome: opencodeSandboxHome,
  sandbox: opencodeAdapter.sandbox,
  detect: (env) => detectCli({ bin: "opencode", verifiedRange: { min: OPENCODE, max: OPENCODE } }, env),
});

function inheritedOpencodeConfig(launch: LaunchContext): Record<string, unknown> {
  try {
    return rec(JSON.parse(launch.env.OPENCODE_CONFIG_CONTENT ?? "{}"));
  } catch {
    return {};
  }
}

const COPILOT = "1.0.102";
const COPILOT_AGENT_MODE = "https://agentclientprotocol.com/protocol/session-modes#agent";
export const copilotAcpAdapter: SessionAgentAdapter = makeAcpAdapter({
  id: "copilot-acp",
  displayName: "GitHub Copilot CLI (ACP)",
  kind: "builtin",
  product: "copilot",
  bin: "copilot",
  capabilities: {
    network: { value: "open", why: "--sandbox needs bubblewrap, slirp4netns and iptables; not used" },
    readOnly: POLICY_READ_ONLY,
    tools: NO_TOOLS,
    nativeSchema: ACP_NATIVE_SCHEMA,
    mcp: {
      value: true,
      why: "--additional-mcp-config (1.0.102 ignores stdio servers given in session/new); caesar's policy allows their tools",
    },
    resume: ACP_RESUME,
    model: { value: true, why: "--model <model>" },
    ...verified(COPILOT),
  },
  fs: { read: true, write: true },
  modelByConfigOption: false,
  // The agent mode with allow-all off asks before commands and edits (autopilot would not).
  session: { config: { mode: COPILOT_AGENT_MODE, allow_all: "off" } },
  // 1.0.102 never starts the stdio servers of session/new's mcpServers: the channel goes on the command line.
  channelInSession: false,
  command(launch) {
    const args = ["--acp", "--no-auto-update"];
    if (launch.model) args.push("--model", launch.model);
    for (const dir of launch.extraDirs) args.push("--add-dir", dir);
    if (launch.channel) args.push(...copilotChannelArgs(launch.channel));
    return { args, env: {} };
  },
  sandboxHome: copilotSandboxHome,
  sandbox: copilotAdapter.sandbox,
  detect: (env) => detectCli({ bin: "copilot", verifiedRange: { min: COPILOT, max: COPILOT } }, env),
});

const CODEX_ACP = "0.16.0";
export const codexAcpAdapter: SessionAgentAdapter = makeAcpAdapter({
  id: "codex-acp",
  displayName: "Codex (ACP, codex-acp)",
  kind: "builtin",
  product: "codex",
  bin: "codex-acp",
  capabilities: {
    // The same sandbox as codex's own: its network switch works the same way.
    network: codexAdapter.capabilities.network,
    readOnly: {
      value: "os",
      why: "sandbox_mode=read-only runs every command in codex's bubblewrap sandbox (bwrap must be on PATH); escalations ask caesar, which refuses them",
    },
    tools: NO_TOOLS,
    nativeSchema: ACP_NATIVE_SCHEMA,
    mcp: ACP_MCP,
    resume: ACP_RESUME,
    model: { value: true, why: "-c model=<model>" },
    ...verified(CODEX_ACP),
  },
  fs: { read: true, write: true },
  modelByConfigOption: false,
  command(launch) {
    const config = (key: string, value: unknown) => ["-c", `${key}=${tomlValue(value)}`];
    const args: string[] = [];
    if (launch.mode === "write") {
      args.push(
        ...config("sandbox_mode", "workspace-write"),
        ...config("sandbox_workspace_write.network_access", launch.network),
        ...config("sandbox_workspace_write.writable_roots", launch.extraDirs),
      );
    } else {
      args.push(...config("sandbox_mode", "read-only"));
    }
    // on-request: what the sandbox forbids is asked of the client, and caesar's policy answers.
    args.push(...config("approval_policy", "on-request"));
    if (launch.model) args.push(...config("model", launch.model));
    return { args, env: {} };
  },
  sandboxHome: codexSandboxHome,
  sandbox: codexAdapter.sandbox,
  async detect(env = process.env) {
    const detection = detectFromPackage(
      { bin: "codex-acp", packageName: "@zed-industries/codex-acp", verified: CODEX_ACP },
      env,
    );
    if (detection.installed && !findExecutable("bwrap", env)) {
      // 0.16.0 ships no bubblewrap of its own (codex does): without one every command fails.
      return {
        ...detection,
        warning: `${detection.warning ? `${detection.warning}; ` : ""}no bwrap on PATH: codex-acp's sandbox cannot start and every command fails (install bubblewrap)`,
      };
    }
    return detection;
  },
});

const CLAUDE_ACP = "0.23.1";
export const claudeAcpAdapter: SessionAgentAdapter = makeAcpAdapter({
  id: "claude-acp",
  displayName: "Claude Code (ACP, claude-agent-acp)",
  kind: "builtin",
  product: "claude",
  bin: "claude-agent-acp",
  capabilities: {
    network: {
      value: "open",
      why: "claude cuts the network only inside its own sandbox (bubblewrap and socat)",
    },
    readOnly: POLICY_READ_ONLY,
    tools: NO_TOOLS,
    nativeSchema: ACP_NATIVE_SCHEMA,
    mcp: ACP_MCP,
    resume: ACP_RESUME,
    model: { value: true, why: "ANTHROPIC_MODEL (the session's model option lists aliases only)" },
    ...verified(CLAUDE_ACP),
  },
  fs: { read: true, write: true },
  modelByConfigOption: false,
  // The default permission mode asks before commands and edits (acceptEdits or bypass would not).
  session: { mode: "default" },
  command(launch) {
    const env: Record<string, string> = {};
    // As root, Claude Code refuses to start the SDK's session ("--dangerously-skip-permissions cannot be
    // used with root") unless told it is sandboxed; caesar never selects the bypass mode itself.
    if (isRoot()) env.IS_SANDBOX = "1";
    if (launch.model) env.ANTHROPIC_MODEL = launch.model;
    return { args: [], env };
  },
  sandboxHome: claudeSandboxHome,
  sandbox: claudeAdapter.sandbox,
  detect: async (env) =>
    detectFromPackage(
      { bin: "claude-agent-acp", packageName: "@zed-industries/claude-agent-acp", verified: CLAUDE_ACP },
      env,
    ),
});

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** The built-in ACP agents, in the order `caesar doctor` lists them. */
export const ACP_ADAPTERS: SessionAgentAdapter[] = [
  codexAcpAdapter,
  claudeAcpAdapter,
  opencodeAcpAdapter,
  geminiAcpAdapter,
  copilotAcpAdapter,
];
