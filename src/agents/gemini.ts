import { readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { EventBody } from "../protocol/event.js";
import type { CommandLine, LaunchContext, LineAgentAdapter, ProcessExit } from "./adapter.js";
import { displayCommand } from "./display.js";
import { fileChangedFor } from "./file-changes.js";
import { promptArg } from "./prompt-arg.js";
import { type SandboxHome, sandboxHome } from "./sandbox-home.js";
import { num, parseObjectLine, rec, str } from "./stream-json.js";
import { StateTranslator } from "./stream-state.js";
import { summarizeToolInput } from "./tool-summary.js";
import { detectCli } from "./version.js";

const VERIFIED = "0.61.0";

/**
 * Google Gemini CLI: `gemini --prompt … --output-format stream-json`. Compact stream with paired
 * tool_use/tool_result ids. It has no per-run MCP flag: the return channel goes into a per-run overlay of
 * its home (GEMINI_CLI_HOME) whose settings add the server to the user's and whose other entries link
 * back to the user's own (credentials included), so nothing of the user's is modified.
 */
export const geminiAdapter: LineAgentAdapter = {
  id: "gemini",
  displayName: "Gemini CLI",
  kind: "builtin",
  product: "gemini",
  capabilities: {
    network: {
      value: "open",
      why: "--yolo turns the network on for commands, even inside gemini's own sandbox",
    },
    readOnly: {
      value: "policy",
      why: "--approval-mode plan removes the shell tool and confines writes to its plans folder, inside the CLI",
    },
    tools: {
      value: "none",
      why: "not wired: gemini only removes tools through deprecated settings (tools.exclude)",
    },
    nativeSchema: { value: false, why: "no structured-output flag (only --output-format json|stream-json)" },
    mcp: {
      value: true,
      why: "mcpServers in a per-run GEMINI_CLI_HOME overlay of the user's settings, with trust: true",
    },
    resume: { value: true, why: "--resume <session_id> continues the session (the id from its init line)" },
    model: { value: true, why: "-m <model>" },
    verifiedOn: VERIFIED,
    verifiedRange: { min: VERIFIED, max: VERIFIED },
  },
  sandbox: {
    home: "runtime/gemini-home",
    variables: ["GEMINI_CLI_HOME"],
    own: {
      value: "off",
      why: "its container sandbox is not used; read-only tasks run --yolo, the kernel refusing their writes",
    },
  },
  detect: (env) => detectCli({ bin: "gemini", verifiedRange: { min: VERIFIED, max: VERIFIED } }, env),
  buildCommand: buildGeminiCommand,
  createTranslator: () => new GeminiTranslator(),
};

type Json = Record<string, unknown>;

function readSettings(path: string): Json {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return {};
  }
  try {
    return rec(JSON.parse(text));
  } catch {
    // gemini accepts comments in settings.json
    try {
      return rec(JSON.parse(text.replace(/^\s*\/\/.*$/gm, "")));
    } catch {
      return {};
    }
  }
}

/**
 * The user's entries a home of the task's links to under caesar's sandbox: credentials and instructions,
 * read-only inside. Not the rest (tmp/, history, projects.json…): gemini writes those, in the task's home.
 */
const SANDBOX_SEEDS = [
  "oauth_creds.json",
  "google_accounts.json",
  "mcp-oauth-tokens.json",
  ".env",
  "GEMINI.md",
];

/**
 * A per-run home whose `.gemini/settings.json` is the user's, with the channel server added when there is
 * one. Outside a sandbox its other entries link to the user's own; inside caesar's, where the user's are
 * read-only, only credentials and instructions are linked and gemini's state starts fresh there.
 */
function runHome(launch: LaunchContext): SandboxHome {
  const userHome = launch.env.GEMINI_CLI_HOME || launch.env.HOME || homedir();
  const userDir = join(userHome, ".gemini");
  const home = join(launch.runtimeDir, "gemini-home");
  const settings = readSettings(join(userDir, "settings.json"));
  const channel = launch.channel;
  if (channel) {
    settings.mcpServers = {
      ...rec(settings.mcpServers),
      // trust: the tool is otherwise not even offered to the model outside --yolo.
      [channel.name]: { command: channel.command, args: channel.args, env: channel.env, trust: true },
    };
  }
  let entries: string[] = [];
  try {
    entries = readdirSync(userDir).filter((name) => name !== "settings.json");
  } catch {
    // no user configuration yet
  }
  if (launch.sandboxed) entries = entries.filter((name) => SANDBOX_SEEDS.includes(name));
  const base = launch.sandboxed
    ? sandboxHome(launch, "gemini-home", userDir, [])
    : { env: {}, files: [], links: [] };
  return {
    home,
    env: { ...base.env, GEMINI_CLI_HOME: home },
    files: [
      ...base.files,
      { path: join(home, ".gemini", "settings.json"), content: `${JSON.stringify(settings, null, 2)}\n` },
    ],
    links: entries.map((name) => ({ path: join(home, ".gemini", name), target: join(userDir, name) })),
  };
}

/**
 * gemini's home of the task's under caesar's sandbox, for its ACP mode (whose return channel goes in the
 * session, not in settings.json).
 */
export function geminiSandboxHome(launch: LaunchContext): SandboxHome {
  return runHome({ ...launch, channel: undefined });
}

export function buildGeminiCommand(launch: LaunchContext): CommandLine {
  const prompt = promptArg(launch);
  const args = ["--output-format", "stream-json", "--skip-trust"];
  // --skip-trust: an untrusted folder silently downgrades --yolo to the default approval mode.
  // Read-only: plan mode removes the shell, unless caesar's sandbox holds read-only in the kernel, where
  // commands run and whatever they write is refused.
  if (launch.mode === "write" || launch.sandboxed) args.push("--yolo");
  else args.push("--approval-mode", "plan");
  if (launch.resume) args.push("--resume", launch.resume);
  if (launch.model) args.push("-m", launch.model);
  for (const dir of launch.extraDirs) args.push("--include-directories", dir);
  const command: CommandLine = {
    bin: "gemini",
    args,
    env: {},
    cwd: launch.task.workspace,
    files: [...prompt.files],
    display: "",
  };
  if (launch.channel || launch.sandboxed) {
    const overlay = runHome(launch);
    Object.assign(command.env, overlay.env);
    command.files!.push(...(overlay.files ?? []));
    command.links = overlay.links;
  }
  // `--prompt=` keeps a brief that starts with "-" from being read as an option.
  args.push(...launch.extraArgs, `--prompt=${prompt.text}`);
  command.display = displayCommand("gemini", args);
  return command;
}

const UNAVAILABLE = /not found|tool_not_registered/i;
const DENIED = /denied|not permitted|not allowed/i;
const RETRY = /Attempt (\d+) failed(?: with status (\d+))?/;

export class GeminiTranslator extends StateTranslator {
  private readonly calls = new Map<string, { name: string; input: unknown }>();
  /** Assistant text arrives in deltas; it is one message once something else happens. */
  private pending = "";

  stdout(line: string): EventBody[] {
    const event = parseObjectLine(line);
    if (!event) return [];
    if (event.type === "message" && event.role === "assistant") {
      this.pending += str(event.content) ?? "";
      if (event.delta !== true) return this.flush();
      return [];
    }
    const events = this.flush();
    switch (event.type) {
      case "init":
        this.state.session ??= str(event.session_id);
        break;
      case "tool_use": {
        const id = str(event.tool_id) ?? "";
        const name = str(event.tool_name) ?? "";
        this.calls.set(id, { name, input: event.parameters });
        events.push(...this.state.tools.start(id, name, summarizeToolInput(event.parameters)));
        break;
      }
      case "tool_result":
        events.push(...this.toolResult(event));
        break;
      case "thought": {
        const text = str(event.content) ?? str(event.subject) ?? "";
        if (text) events.push({ type: "thinking", text });
        break;
      }
      case "error": {
        const message = str(event.message) ?? "error";
        // gemini's non-fatal notices: its severity says which ("warning" or "error").
        const severity = str(event.severity);
        const code = severity === "warning" ? "warning" : severity === "error" ? "agent_error" : undefined;
        events.push(...this.state.errorEvent(message, code));
        break;
      }
      case "result":
        events.push(...this.result(event));
        break;
    }
    return events;
  }

  private toolResult(event: Json): EventBody[] {
    const id = str(event.tool_id) ?? "";
    const call = this.calls.get(id);
    const ok = event.status === "success";
    const error = rec(event.error);
    const output = ok ? str(event.output) : (str(error.message) ?? str(event.output) ?? "error");
    if (!ok && (error.type === "tool_not_registered" || UNAVAILABLE.test(output ?? ""))) {
      this.state.addFinding({
        severity: "medium",
        title: `Tool unavailable: ${call?.name ?? "a tool"}`,
        detail: (output ?? "").slice(0, 1000),
      });
    } else if (!ok && DENIED.test(output ?? "")) {
      this.state.denied(call?.name ?? "", output ?? "", `denied\n${id}`);
    }
    const events = this.state.tools.end(id, { ok, tool: call?.name, output });
    if (ok && call) events.push(...fileChangedFor(call.name, call.input));
    return events;
  }

  private result(event: Json): EventBody[] {
    const stats = rec(event.stats);
    this.state.setUsage({
      input_tokens: num(stats.input_tokens),
      output_tokens: num(stats.output_tokens),
      duration_ms: num(stats.duration_ms),
    });
    if (event.status === "success") return [];
    const error = rec(event.error);
    const message = str(error.message) ?? "the run failed";
    // The API error is embedded as JSON text: `[API Error: {"error":{"code":401,…}}]`.
    const code = /"code":\s*(\d{3})/.exec(message)?.[1];
    const status = code === undefined ? undefined : Number(code);
    const failure = this.state.fail(message, status);
    return this.state.errorEvent(failure.message, failure.code);
  }

  /** stderr carries gemini's retries ("Attempt 2 failed with status 429. Retrying with backoff..."). */
  override stderr(line: string): EventBody[] {
    this.state.noteStderr(line);
    const retry = RETRY.exec(line);
    if (!retry) return [];
    const status = retry[2] ? Number(retry[2]) : undefined;
    return this.state.retrying(line.trim(), {
      ...(status !== undefined ? { status } : {}),
      notice: `Model call retried: ${line.trim().slice(0, 300)}`,
    });
  }

  private flush(): EventBody[] {
    const text = this.pending;
    this.pending = "";
    return this.state.message(text);
  }

  override async finish(exit: ProcessExit) {
    return this.state.outcome(exit, this.flush());
  }
}
