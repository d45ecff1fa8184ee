import { join } from "node:path";
import type { EventBody } from "../protocol/event.js";
import type { ChannelServer, CommandLine, LaunchContext, LineAgentAdapter, ProcessExit } from "./adapter.js";
import { displayCommand } from "./display.js";
import { fileChangedFor } from "./file-changes.js";
import { readNativeOutput } from "./native-report.js";
import { promptArg } from "./prompt-arg.js";
import { type SandboxHome, sandboxHome, userStateDir, withSandboxHome } from "./sandbox-home.js";
import { int, num, parseObjectLine, rec, str } from "./stream-json.js";
import { StateTranslator } from "./stream-state.js";
import { summarizeToolInput } from "./tool-summary.js";
import { detectCli } from "./version.js";

const VERIFIED = "1.0.102";

/**
 * GitHub Copilot CLI: `copilot --prompt … --output-format json`, a verbose session-event log in which
 * many lines are marked `ephemeral` (deltas, background-task notices) and are skipped.
 */
export const copilotAdapter: LineAgentAdapter = {
  id: "copilot",
  displayName: "GitHub Copilot CLI",
  kind: "builtin",
  product: "copilot",
  capabilities: {
    network: {
      value: "open",
      why: "--sandbox would cut it but needs bubblewrap, slirp4netns and iptables on the host; caesar does not rely on it",
    },
    readOnly: {
      value: "policy",
      why: "--deny-tool shell --deny-tool write refuses commands and file writes inside the CLI",
    },
    tools: {
      value: "exclude",
      why: "--deny-tool <name> refuses a tool inside the CLI (a denial beats --allow-all-tools)",
    },
    nativeSchema: { value: false, why: "no structured-output flag (only --output-format json)" },
    mcp: {
      value: true,
      why: "--additional-mcp-config adds a stdio server for this session; --allow-all-tools lets its tools run",
    },
    resume: { value: true, why: "--resume=<session id> continues the session (the id from its result line)" },
    model: { value: true, why: "--model <model>" },
    verifiedOn: VERIFIED,
    verifiedRange: { min: VERIFIED, max: VERIFIED },
  },
  sandbox: {
    home: "runtime/copilot-home",
    variables: ["COPILOT_HOME"],
    own: {
      value: "off",
      why: "--sandbox is not used; read-only tasks keep the shell, the kernel refusing its writes",
    },
  },
  detect: (env) => detectCli({ bin: "copilot", verifiedRange: { min: VERIFIED, max: VERIFIED } }, env),
  buildCommand: buildCopilotCommand,
  createTranslator: (launch) => new CopilotTranslator(usagePath(launch)),
};

/** Token counts are not in copilot's stream; --usage-output-file writes them at the end. */
function usagePath(launch: LaunchContext): string {
  return join(launch.runtimeDir, "copilot-usage.json");
}

/** `--additional-mcp-config` with the return channel: added to the user's MCP servers for this session only. */
export function copilotChannelArgs(channel: ChannelServer): string[] {
  const config = {
    mcpServers: {
      [channel.name]: {
        type: "local",
        command: channel.command,
        args: channel.args,
        env: channel.env,
        tools: ["*"],
      },
    },
  };
  return ["--additional-mcp-config", JSON.stringify(config)];
}

export function buildCopilotCommand(launch: LaunchContext): CommandLine {
  const prompt = promptArg(launch);
  // --allow-all-tools is what makes a headless run possible at all; read-only then denies by name
  // (a denial takes precedence over an allowance).
  const args = ["--output-format", "json", "--no-auto-update", "--no-ask-user", "--allow-all-tools"];
  args.push("--usage-output-file", usagePath(launch));
  // Under caesar's sandbox the kernel holds read-only: the shell runs, and whatever it writes is refused.
  if (launch.mode === "read-only")
    args.push(...(launch.sandboxed ? [] : ["--deny-tool", "shell"]), "--deny-tool", "write");
  for (const tool of launch.tools.excluded) args.push("--deny-tool", tool);
  if (launch.resume) args.push(`--resume=${launch.resume}`);
  if (launch.model) args.push("--model", launch.model);
  for (const dir of launch.extraDirs) args.push("--add-dir", dir);
  if (launch.channel) args.push(...copilotChannelArgs(launch.channel));
  args.push(...launch.extraArgs, `--prompt=${prompt.text}`);
  const command: CommandLine = {
    bin: "copilot",
    args,
    env: {},
    cwd: launch.task.workspace,
    files: prompt.files,
    outputs: [usagePath(launch)],
    display: displayCommand("copilot", args),
  };
  return launch.sandboxed ? withSandboxHome(command, copilotSandboxHome(launch)) : command;
}

/**
 * Under caesar's sandbox: a COPILOT_HOME of the task's (sessions, logs) with the user's config.json copied
 * (copilot rewrites it) and mcp-config.json linked in; copilot unpacks its bundled packages into
 * XDG_CACHE_HOME, per task too. Its own `--sandbox` stays off (it needs slirp4netns and iptables on the
 * host): caesar's holds its files (docs/adapters.md).
 */
export function copilotSandboxHome(launch: LaunchContext): SandboxHome {
  const user = userStateDir(launch, "COPILOT_HOME", ".copilot");
  const home = sandboxHome(launch, "copilot-home", user, [
    { name: "config.json", how: "copy" },
    { name: "mcp-config.json", how: "link" },
  ]);
  home.env.COPILOT_HOME = home.home;
  return home;
}

export class CopilotTranslator extends StateTranslator {
  constructor(private readonly usageFile?: string) {
    super();
  }
  private readonly calls = new Map<string, { name: string; input: unknown }>();

  stdout(line: string): EventBody[] {
    const event = parseObjectLine(line);
    if (!event || event.ephemeral === true) return [];
    const data = rec(event.data);
    switch (event.type) {
      case "assistant.message":
        return this.state.message(str(data.content) ?? "");
      case "assistant.reasoning": {
        const text = str(data.content) ?? "";
        return text ? [{ type: "thinking", text }] : [];
      }
      case "tool.execution_start": {
        const id = str(data.toolCallId) ?? "";
        const name = str(data.toolName) ?? "";
        this.calls.set(id, { name, input: data.arguments });
        return this.state.tools.start(id, name, summarizeToolInput(data.arguments));
      }
      case "tool.execution_complete":
        return this.toolComplete(data);
      case "session.error": {
        const message = str(data.message) ?? "session error";
        const failure = this.state.fail(message, int(data.statusCode));
        return this.state.errorEvent(message, failure.code);
      }
      case "session.warning": {
        const message = str(data.message) ?? "";
        return message ? this.state.errorEvent(message, "warning") : [];
      }
      case "result":
        return this.result(event);
      default:
        return [];
    }
  }

  private toolComplete(data: Record<string, unknown>): EventBody[] {
    const id = str(data.toolCallId) ?? "";
    const call = this.calls.get(id);
    const ok = data.success === true;
    const error = rec(data.error);
    const output = ok ? str(rec(data.result).content) : (str(error.message) ?? "failed");
    if (!ok && error.code === "denied") this.state.denied(call?.name ?? "", output ?? "", `denied\n${id}`);
    if (!ok && /does not exist/.test(output ?? "")) {
      this.state.addFinding({
        severity: "medium",
        title: `Tool unavailable: ${call?.name ?? "a tool"}`,
        detail: (output ?? "").slice(0, 1000),
      });
    }
    const exitCode = int(rec(data.shellExecution).exitCode);
    const events = this.state.tools.end(id, {
      ok: ok && (exitCode === undefined || exitCode === 0),
      tool: call?.name,
      output,
      ...(exitCode !== undefined ? { exitCode } : {}),
    });
    if (ok && call) events.push(...fileChangedFor(call.name, call.input));
    return events;
  }

  private result(event: Record<string, unknown>): EventBody[] {
    // The session id comes only on this last line (1.0.102).
    this.state.session ??= str(event.sessionId);
    const usage = rec(event.usage);
    const duration = num(usage.sessionDurationMs);
    if (duration !== undefined) this.state.setUsage({ duration_ms: duration });
    const exitCode = int(event.exitCode);
    if (exitCode !== undefined && exitCode !== 0) this.state.fail(`copilot exited with code ${exitCode}`);
    return [];
  }

  override async finish(exit: ProcessExit) {
    if (this.usageFile) {
      const text = await readNativeOutput(this.usageFile);
      const metrics = rec(text ? safeParse(text) : undefined).modelMetrics;
      let input = 0;
      let output = 0;
      for (const model of Object.values(rec(metrics))) {
        const usage = rec(rec(model).usage);
        input += (num(usage.inputTokens) ?? 0) + (num(usage.cacheReadTokens) ?? 0);
        output += num(usage.outputTokens) ?? 0;
      }
      if (input > 0 || output > 0) this.state.setUsage({ input_tokens: input, output_tokens: output });
    }
    return this.state.outcome(exit);
  }
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
