import { dirname } from "node:path";
import type { EventBody } from "../protocol/event.js";
import type { CommandLine, LaunchContext, LineAgentAdapter } from "./adapter.js";
import { displayCommand } from "./display.js";
import { fileChangedFor } from "./file-changes.js";
import { nativeReportFrom, reportSchemaFile } from "./native-report.js";
import { promptArg } from "./prompt-arg.js";
import { type SandboxHome, sandboxHome, seedInto, userStateDir, withSandboxHome } from "./sandbox-home.js";
import { int, list, num, parseObjectLine, rec, str } from "./stream-json.js";
import { StateTranslator } from "./stream-state.js";
import { contentText, summarizeToolInput } from "./tool-summary.js";
import { detectCli } from "./version.js";

const VERIFIED = "2.1.332";

/** Tools a write-mode run may use without a prompt (the edit tools are also covered by acceptEdits). */
const WRITE_TOOLS = ["Bash", "Edit", "Write", "MultiEdit", "NotebookEdit", "WebFetch", "WebSearch"];
/** Claude's tool for --json-schema answers: its input is the report, shown as a message, not a tool. */
const STRUCTURED_OUTPUT = "StructuredOutput";

/**
 * Anthropic Claude Code: `claude --print --output-format stream-json --verbose`. Write mode pre-approves
 * its tools by name (--dangerously-skip-permissions is refused as root); tool ends carry only the call id.
 */
export const claudeAdapter: LineAgentAdapter = {
  id: "claude",
  displayName: "Claude Code",
  kind: "builtin",
  product: "claude",
  capabilities: {
    network: {
      value: "open",
      why: "no network switch without claude's own sandbox, which needs bubblewrap and socat and otherwise runs commands unsandboxed",
    },
    readOnly: {
      value: "policy",
      why: "--permission-mode dontAsk denies edits and modifying commands inside the CLI (the task directory stays writable); no OS sandbox",
    },
    tools: {
      value: "allow-and-exclude",
      why: "--tools limits the built-in tools to a list; --disallowedTools removes tools by name (it beats --allowedTools)",
    },
    nativeSchema: {
      value: true,
      why: "--json-schema adds a StructuredOutput tool; result.structured_output is used only when present",
    },
    mcp: {
      value: true,
      why: "--mcp-config loads a stdio server for this run; --allowedTools mcp__<name> lets its tools run",
    },
    resume: { value: true, why: "--resume <session_id> continues the session with the same flags" },
    model: { value: true, why: "--model <model>" },
    verifiedOn: VERIFIED,
    verifiedRange: { min: VERIFIED, max: VERIFIED },
  },
  sandbox: {
    home: "runtime/claude-config",
    variables: ["CLAUDE_CONFIG_DIR"],
    own: {
      value: "off",
      why: "its optional sandbox is not used; in read-only tasks Bash is allowed, the kernel refusing its writes",
    },
  },
  detect: (env) => detectCli({ bin: "claude", verifiedRange: { min: VERIFIED, max: VERIFIED } }, env),
  buildCommand: buildClaudeCommand,
  createTranslator: () => new ClaudeTranslator(),
};

export function buildClaudeCommand(launch: LaunchContext): CommandLine {
  const schema = reportSchemaFile(launch.runtimeDir, "plain");
  const prompt = promptArg(launch);
  const args = ["--print", "--output-format", "stream-json", "--verbose"];
  if (launch.resume) args.push("--resume", launch.resume);
  if (launch.model) args.push("--model", launch.model);
  const allowed = launch.mode === "write" ? [...WRITE_TOOLS] : [];
  if (launch.mode === "write") {
    args.push("--permission-mode", "acceptEdits");
  } else {
    // dontAsk denies whatever is not pre-approved (reads and read-only commands still run); plan mode
    // would also refuse the report file. `//path` is an absolute path in claude's rules.
    args.push("--permission-mode", "dontAsk");
    for (const dir of launch.extraDirs) allowed.push(`Write(/${dir}/**)`, `Edit(/${dir}/**)`);
    // Under caesar's sandbox the kernel holds read-only: commands run, and whatever they write is refused.
    if (launch.sandboxed) allowed.push("Bash");
  }
  if (launch.channel) {
    // The whole server: `mcp__<name>` allows each of its tools.
    allowed.push(`mcp__${launch.channel.name}`);
    const config = {
      mcpServers: {
        [launch.channel.name]: {
          type: "stdio",
          command: launch.channel.command,
          args: launch.channel.args,
          env: launch.channel.env,
        },
      },
    };
    args.push("--mcp-config", JSON.stringify(config));
  }
  if (allowed.length > 0) args.push("--allowedTools", allowed.join(","));
  if (launch.tools.allowed) args.push("--tools", launch.tools.allowed.join(","));
  if (launch.tools.excluded.length > 0) args.push("--disallowedTools", launch.tools.excluded.join(","));
  for (const dir of launch.extraDirs) args.push("--add-dir", dir);
  // Inline JSON: claude reads the option as JSON text (a path is not accepted here).
  args.push("--json-schema", JSON.stringify(JSON.parse(schema.content)));
  // Options taking several values (--allowedTools, --add-dir, --mcp-config) would swallow the prompt.
  args.push(...launch.extraArgs, "--", prompt.text);
  const command: CommandLine = {
    bin: "claude",
    args,
    env: {},
    cwd: launch.task.workspace,
    files: prompt.files,
    display: displayCommand("claude", args),
  };
  return launch.sandboxed ? withSandboxHome(command, claudeSandboxHome(launch)) : command;
}

/**
 * Under caesar's sandbox: a CLAUDE_CONFIG_DIR of the task's (claude writes its sessions — which a
 * continued session reads back — todos, shell snapshots and `.claude.json` there), with the user's
 * credentials, settings and CLAUDE.md linked in and `.claude.json` copied (claude rewrites it as it runs).
 * Without CLAUDE_CONFIG_DIR, the user's are `~/.claude/` and `~/.claude.json`. claude's own sandbox stays
 * off, as outside: caesar's holds its files (docs/adapters.md).
 */
export function claudeSandboxHome(launch: LaunchContext): SandboxHome {
  const user = userStateDir(launch, "CLAUDE_CONFIG_DIR", ".claude");
  const home = sandboxHome(launch, "claude-config", user, [
    { name: ".credentials.json", how: "link" },
    { name: "settings.json", how: "link" },
    { name: "CLAUDE.md", how: "link" },
    { name: ".claude.json", how: "copy" },
  ]);
  // Without CLAUDE_CONFIG_DIR, claude keeps .claude.json beside ~/.claude, not inside it.
  if (!launch.env.CLAUDE_CONFIG_DIR)
    seedInto(home, home.home, dirname(user), { name: ".claude.json", how: "copy" });
  home.env.CLAUDE_CONFIG_DIR = home.home;
  return home;
}

interface ToolCall {
  name: string;
  input: unknown;
}

const UNAVAILABLE = /No such tool available|is disabled for this session/i;

export class ClaudeTranslator extends StateTranslator {
  private readonly calls = new Map<string, ToolCall>();
  private readonly hidden = new Set<string>();

  stdout(line: string): EventBody[] {
    const event = parseObjectLine(line);
    if (!event) return [];
    this.state.session ??= str(event.session_id);
    switch (event.type) {
      case "system":
        return this.system(event);
      case "assistant":
        return this.assistant(rec(event.message));
      case "user":
        return this.user(rec(event.message));
      case "result":
        return this.result(event);
      default:
        return [];
    }
  }

  private system(event: Record<string, unknown>): EventBody[] {
    switch (event.subtype) {
      case "api_retry": {
        const status = int(event.error_status);
        const detail = `API retry ${num(event.attempt) ?? "?"}/${num(event.max_retries) ?? "?"}: ${str(event.error) ?? "error"}${status ? ` (HTTP ${status})` : ""}`;
        const code = status ? undefined : codeOf(str(event.error));
        return this.state.retrying(detail, { ...(status ? { status } : {}), ...(code ? { code } : {}) });
      }
      case "permission_denied": {
        const tool = str(event.tool_name) ?? "";
        this.state.denied(tool, str(event.message) ?? "denied", `denied\n${str(event.tool_use_id) ?? tool}`);
        return [];
      }
      case "init": {
        const failed = list(event.mcp_servers)
          .map((server) => rec(server))
          .filter((server) => server.status === "failed");
        return failed.flatMap((server) =>
          this.state.errorEvent(`MCP server ${str(server.name) ?? "?"} failed to start`, "mcp_failed"),
        );
      }
      default:
        return [];
    }
  }

  private assistant(message: Record<string, unknown>): EventBody[] {
    const events: EventBody[] = [];
    for (const raw of list(message.content)) {
      const block = rec(raw);
      // Claude reports API failures as a synthetic assistant message; the result line says it better.
      if (block.type === "text" && message.model !== "<synthetic>") {
        events.push(...this.state.message(str(block.text) ?? ""));
      } else if (block.type === "thinking") {
        const text = str(block.thinking) ?? "";
        if (text) events.push({ type: "thinking", text });
      } else if (block.type === "tool_use") {
        const id = str(block.id) ?? "";
        const name = str(block.name) ?? "";
        if (name === STRUCTURED_OUTPUT) {
          this.hidden.add(id);
          events.push(...this.state.message(JSON.stringify(block.input)));
          continue;
        }
        this.calls.set(id, { name, input: block.input });
        events.push(...this.state.tools.start(id, name, summarizeToolInput(block.input)));
      }
    }
    return events;
  }

  private user(message: Record<string, unknown>): EventBody[] {
    const events: EventBody[] = [];
    for (const raw of list(message.content)) {
      const block = rec(raw);
      if (block.type !== "tool_result") continue;
      const id = str(block.tool_use_id) ?? "";
      if (this.hidden.has(id)) continue;
      const call = this.calls.get(id);
      const ok = block.is_error !== true;
      const output = contentText(block.content);
      if (!ok && UNAVAILABLE.test(output)) {
        this.state.addFinding({
          severity: "medium",
          title: `Tool unavailable: ${call?.name ?? "a tool"}`,
          detail: output.slice(0, 1000),
        });
      }
      events.push(...this.state.tools.end(id, { ok, tool: call?.name, output }));
      if (ok && call) events.push(...fileChangedFor(call.name, call.input));
    }
    return events;
  }

  private result(event: Record<string, unknown>): EventBody[] {
    const usage = rec(event.usage);
    const input =
      (num(usage.input_tokens) ?? 0) +
      (num(usage.cache_creation_input_tokens) ?? 0) +
      (num(usage.cache_read_input_tokens) ?? 0);
    this.state.setUsage({
      input_tokens: input,
      output_tokens: num(usage.output_tokens),
      cost_usd: num(event.total_cost_usd),
      duration_ms: num(event.duration_ms),
    });
    for (const raw of list(event.permission_denials)) {
      const denial = rec(raw);
      const tool = str(denial.tool_name) ?? "";
      this.state.denied(
        tool,
        summarizeToolInput(denial.tool_input),
        `denied\n${str(denial.tool_use_id) ?? tool}`,
      );
    }
    if ("structured_output" in event) {
      const report = nativeReportFrom(event.structured_output);
      if (report !== undefined) this.state.nativeReport = report;
    }
    const text = str(event.result);
    const failed = event.is_error === true || (str(event.subtype) ?? "success") !== "success";
    if (!failed && text !== undefined && text !== "") this.state.finalText = text;
    if (failed) {
      const detail = text || str(event.subtype) || "error";
      const failure = this.state.fail(detail, int(event.api_error_status));
      return this.state.errorEvent(failure.message, failure.code);
    }
    return [];
  }
}

function codeOf(error: string | undefined) {
  if (error === "authentication_failed") return "auth_failed" as const;
  if (error === "rate_limit") return "rate_limited" as const;
  if (error === "unknown" || error === "connection_error") return "model_unreachable" as const;
  return undefined;
}
