import { join } from "node:path";
import type { EventBody } from "../protocol/event.js";
import type { ChangeAction } from "../protocol/report.js";
import type { CommandLine, LaunchContext, LineAgentAdapter } from "./adapter.js";
import { displayCommand } from "./display.js";
import { nativeReportFrom, readNativeOutput, reportSchemaFile } from "./native-report.js";
import { promptArg } from "./prompt-arg.js";
import { sandboxHome, userStateDir, withSandboxHome } from "./sandbox-home.js";
import { int, list, num, parseObjectLine, rec, str } from "./stream-json.js";
import { StateTranslator } from "./stream-state.js";
import { tomlKey, tomlValue } from "./toml-value.js";
import { contentText, summarizeToolInput } from "./tool-summary.js";
import { detectCli } from "./version.js";

const VERIFIED = "0.171.0";

/**
 * OpenAI Codex CLI: `codex exec --json`. The most deterministic stream of the five: items start and
 * complete with their id; the final message can be constrained by --output-schema and written with -o.
 */
export const codexAdapter: LineAgentAdapter = {
  id: "codex",
  displayName: "Codex CLI",
  kind: "builtin",
  product: "codex",
  capabilities: {
    network: {
      value: "write-only",
      why: "workspace-write's sandbox cuts the network unless sandbox_workspace_write.network_access=true; read-only always cuts it",
    },
    readOnly: {
      value: "os",
      why: "-s read-only runs every command in codex's bubblewrap sandbox with a read-only filesystem (needs user namespaces)",
    },
    tools: {
      value: "none",
      why: "codex exec has no switch to remove a tool by name (0.171.0); its sandbox is the only control",
    },
    nativeSchema: {
      value: true,
      why: "--output-schema constrains the final message and -o writes it; it is used only when it parses as JSON",
    },
    mcp: {
      value: true,
      why: "-c mcp_servers.<name>.* loads a stdio server for this run; default_tools_approval_mode=approve lets it run",
    },
    resume: {
      value: true,
      why: "codex exec resume <thread_id> continues the session; the sandbox is set again with -c (resume has no -s or --add-dir)",
    },
    model: { value: true, why: "-m <model>" },
    verifiedOn: VERIFIED,
    verifiedRange: { min: VERIFIED, max: VERIFIED },
  },
  sandbox: {
    home: "runtime/codex-home",
    variables: ["CODEX_HOME", "TMPDIR=/tmp/.codex-tmp"],
    own: {
      value: "nested",
      why: "its bubblewrap runs inside caesar's: it cuts its commands' network while codex reaches its model; the worktree's registration is one of its writable roots (commits)",
    },
  },
  detect: (env) => detectCli({ bin: "codex", verifiedRange: { min: VERIFIED, max: VERIFIED } }, env),
  buildCommand: buildCodexCommand,
  createTranslator: (launch) => new CodexTranslator(lastMessagePath(launch), launch.resume !== undefined),
};

function lastMessagePath(launch: LaunchContext): string {
  return join(launch.runtimeDir, "codex-last-message.txt");
}

export function buildCodexCommand(launch: LaunchContext): CommandLine {
  const schema = reportSchemaFile(launch.runtimeDir, "strict");
  const prompt = promptArg(launch);
  const config = (key: string, value: unknown) => ["-c", `${key}=${tomlValue(value)}`];
  // `exec resume` (0.171) takes neither -s, --add-dir nor --color: the same sandbox is set through -c.
  const args = launch.resume
    ? ["exec", "resume", "--json", "--skip-git-repo-check"]
    : ["exec", "--json", "--skip-git-repo-check", "--color", "never"];
  // Under caesar's sandbox, which holds read-only in the kernel, a read-only task runs codex's own sandbox
  // as workspace-write too: its commands run (whatever they write is refused), their network still cut.
  if (launch.mode === "write" || launch.sandboxed) {
    // Under caesar's sandbox its worktree's registration too: git writes HEAD, the index and its objects there.
    const writable = [
      ...launch.extraDirs,
      ...(launch.gitDir && launch.mode === "write" ? [launch.gitDir] : []),
    ];
    if (launch.resume) {
      args.push(...config("sandbox_mode", "workspace-write"));
      if (writable.length > 0) args.push(...config("sandbox_workspace_write.writable_roots", writable));
    } else args.push("-s", "workspace-write");
    args.push(...config("sandbox_workspace_write.network_access", launch.mode === "write" && launch.network));
    if (!launch.resume) for (const dir of writable) args.push("--add-dir", dir);
  } else {
    // Read-only: the sandbox cuts writes and network alike; the report comes back through -o.
    args.push(...(launch.resume ? config("sandbox_mode", "read-only") : ["-s", "read-only"]));
  }
  // Never ask: a headless run has nobody to answer, and a question would stall it.
  args.push(...config("approval_policy", "never"));
  if (launch.model) args.push("-m", launch.model);
  args.push("--output-schema", schema.path, "-o", lastMessagePath(launch));
  if (launch.channel) {
    const server = `mcp_servers.${tomlKey(launch.channel.name)}`;
    args.push(
      ...config(`${server}.command`, launch.channel.command),
      ...config(`${server}.args`, launch.channel.args),
      ...config(`${server}.env`, launch.channel.env),
      // approval_policy=never otherwise refuses every MCP call ("requires approval").
      ...config(`${server}.default_tools_approval_mode`, "approve"),
      // A channel that cannot start fails the run at once instead of silently going without it.
      ...config(`${server}.required`, true),
    );
  }
  args.push(...launch.extraArgs, ...(launch.resume ? [launch.resume] : []), "--", prompt.text);
  const command: CommandLine = {
    bin: "codex",
    args,
    env: {},
    cwd: launch.task.workspace,
    files: [schema, ...prompt.files],
    outputs: [lastMessagePath(launch)],
    display: displayCommand("codex", args),
  };
  return launch.sandboxed ? withSandboxHome(command, codexSandboxHome(launch)) : command;
}

/**
 * Under caesar's sandbox: a CODEX_HOME of the task's (codex writes its sessions, logs, databases and the
 * helper binaries its own bubblewrap sandbox runs there), with the user's config.toml, auth.json and
 * AGENTS.md linked in (read-only inside). codex's own sandbox stays on, nested: it still cuts its
 * commands' network while codex reaches its model (docs/adapters.md). codex refuses to make its helpers
 * under its temporary directory: inside, TMPDIR is a folder of the private /tmp that holds no project.
 */
export function codexSandboxHome(launch: LaunchContext) {
  const user = userStateDir(launch, "CODEX_HOME", ".codex");
  const home = sandboxHome(launch, "codex-home", user, [
    { name: "config.toml", how: "link" },
    { name: "auth.json", how: "link" },
    { name: "AGENTS.md", how: "link" },
  ]);
  home.env.CODEX_HOME = home.home;
  home.env.TMPDIR = CODEX_SANDBOX_TMPDIR;
  return home;
}

/** The temporary directory codex gets inside caesar's sandbox (sandbox-run.ts makes it). */
export const CODEX_SANDBOX_TMPDIR = "/tmp/.codex-tmp";

/** Codex item types that are tool calls, and the tool name caesar shows for them. */
function toolName(item: Record<string, unknown>): string | undefined {
  switch (item.type) {
    case "command_execution":
      return "shell";
    case "file_change":
      return "apply_patch";
    case "mcp_tool_call":
      return `mcp__${str(item.server) ?? "?"}__${str(item.tool) ?? "?"}`;
    case "web_search":
      return "web_search";
    default:
      return undefined;
  }
}

function toolInput(item: Record<string, unknown>): string {
  switch (item.type) {
    case "command_execution":
      return summarizeToolInput(str(item.command) ?? "");
    case "file_change":
      return list(item.changes)
        .map((change) => str(rec(change).path))
        .filter(Boolean)
        .join(", ");
    case "mcp_tool_call":
      return summarizeToolInput(item.arguments);
    case "web_search":
      return str(item.query) ?? "";
    default:
      return "";
  }
}

/** What the read-only sandbox answers a write (the stream shows the command as merely failed). */
const SANDBOX_DENIAL = /Read-only file system|blocked by read-only sandbox/;

const CHANGE_ACTIONS: Record<string, ChangeAction> = { add: "added", update: "modified", delete: "deleted" };

export class CodexTranslator extends StateTranslator {
  constructor(
    private readonly lastMessageFile?: string,
    /** A continued thread: codex 0.171 reports the thread's usage so far, not this run's. */
    private readonly resumed = false,
  ) {
    super();
  }

  stdout(line: string): EventBody[] {
    const event = parseObjectLine(line);
    if (!event) return [];
    const item = rec(event.item);
    switch (event.type) {
      case "thread.started":
        this.state.session ??= str(event.thread_id);
        return [];
      case "item.started":
        return this.itemStarted(item);
      case "item.completed":
        return this.itemCompleted(item);
      case "turn.completed": {
        const usage = rec(event.usage);
        this.state.addUsage(num(usage.input_tokens), num(usage.output_tokens));
        return [];
      }
      case "turn.failed": {
        const message = str(rec(event.error).message) ?? "turn failed";
        const failure = this.state.fail(message);
        return this.state.errorEvent(message, failure.code);
      }
      case "error": {
        // Transient notices ("Reconnecting... waiting for network") repeat until codex gives up or is killed.
        return this.state.retrying(str(event.message) ?? "error");
      }
      default:
        return [];
    }
  }

  private itemStarted(item: Record<string, unknown>): EventBody[] {
    const tool = toolName(item);
    if (!tool) return [];
    return this.state.tools.start(str(item.id), tool, toolInput(item));
  }

  private itemCompleted(item: Record<string, unknown>): EventBody[] {
    const id = str(item.id);
    switch (item.type) {
      case "agent_message":
        return this.state.message(str(item.text) ?? "");
      case "reasoning": {
        const text = str(item.text) ?? "";
        return text ? [{ type: "thinking", text }] : [];
      }
      case "error":
        // Non-fatal notices as items (e.g. unknown model metadata).
        return this.state.errorEvent(str(item.message) ?? "error");
      case "command_execution": {
        const exitCode = int(item.exit_code);
        const ok = item.status === "completed" && (exitCode === undefined || exitCode === 0);
        const output = str(item.aggregated_output) ?? "";
        if (!ok && SANDBOX_DENIAL.test(output)) this.state.denied("shell", output.trim(), `denied\n${id}`);
        return this.state.tools.end(id, {
          ok,
          tool: "shell",
          input: toolInput(item),
          output,
          exitCode: exitCode ?? null,
        });
      }
      case "file_change": {
        const ok = item.status === "completed";
        const events = this.state.tools.end(id, { ok, tool: "apply_patch", input: toolInput(item) });
        if (ok) {
          for (const change of list(item.changes)) {
            const path = str(rec(change).path);
            const kind = str(rec(change).kind) ?? "";
            const action = CHANGE_ACTIONS[kind];
            if (path) events.push({ type: "file_changed", path, ...(action ? { action } : {}) });
          }
        }
        return events;
      }
      case "mcp_tool_call": {
        const error = str(rec(item.error).message);
        const ok = item.status === "completed" && !error;
        return this.state.tools.end(id, {
          ok,
          tool: toolName(item),
          input: toolInput(item),
          output: error ?? contentText(rec(item.result).content),
        });
      }
      case "web_search":
        return this.state.tools.end(id, { ok: true, tool: "web_search", input: toolInput(item) });
      case "todo_list": {
        const items = list(item.items).map((entry) => rec(entry));
        const done = items.filter((entry) => entry.completed === true).length;
        return items.length > 0
          ? [{ type: "progress", message: `Plan: ${done}/${items.length} steps done` }]
          : [];
      }
      default:
        return [];
    }
  }

  override async finish(exit: { code: number | null; signal: NodeJS.Signals | null }) {
    if (this.lastMessageFile) {
      const last = await readNativeOutput(this.lastMessageFile);
      if (last !== undefined) {
        const report = nativeReportFrom(last);
        if (report !== undefined) this.state.nativeReport = report;
        else if (this.state.finalText === undefined && last.trim() !== "") this.state.finalText = last;
      }
    }
    const outcome = this.state.outcome(exit);
    return this.resumed && outcome.usage ? { ...outcome, usageCoversSession: true } : outcome;
  }
}
