import { join, relative } from "node:path";
import type { EventBody } from "../protocol/event.js";
import type { CommandLine, LaunchContext, LineAgentAdapter } from "./adapter.js";
import { displayCommand } from "./display.js";
import { fileChangedFor } from "./file-changes.js";
import { promptArg } from "./prompt-arg.js";
import { type SandboxHome, sandboxHome, seedInto, userStateDir, withSandboxHome } from "./sandbox-home.js";
import { int, num, parseObjectLine, rec, str } from "./stream-json.js";
import { StateTranslator } from "./stream-state.js";
import { summarizeToolInput } from "./tool-summary.js";
import { detectCli } from "./version.js";

const VERIFIED = "1.18.33";

/**
 * OpenCode: `opencode run --format json`. Permissions and the return channel go in the inline config
 * (OPENCODE_CONFIG_CONTENT), merged over the caller's own. Its JSON stream reports a tool only once it
 * has finished, so caesar shows the start and the end of each tool at the same moment.
 */
export const opencodeAdapter: LineAgentAdapter = {
  id: "opencode",
  displayName: "OpenCode",
  kind: "builtin",
  product: "opencode",
  capabilities: {
    network: {
      value: "open",
      why: "opencode has no sandbox and no network switch (only command-pattern rules)",
    },
    readOnly: {
      value: "policy",
      why: "permission bash=deny and edit=deny (except the task directory) remove or refuse the tools inside the CLI",
    },
    tools: {
      value: "exclude",
      why: 'permission <tool> = "deny" removes the tool from what the model is offered',
    },
    nativeSchema: { value: false, why: "no structured-output flag in `opencode run`" },
    mcp: { value: true, why: "an `mcp` entry in OPENCODE_CONFIG_CONTENT starts a stdio server for this run" },
    resume: { value: true, why: "opencode run --session <id> continues the session" },
    model: { value: true, why: "--model <provider/model>" },
    verifiedOn: VERIFIED,
    verifiedRange: { min: VERIFIED, max: VERIFIED },
  },
  sandbox: {
    home: "runtime/opencode-home",
    variables: ["XDG_CONFIG_HOME", "XDG_DATA_HOME"],
    own: {
      value: "none",
      why: "no sandbox of its own; read-only tasks allow bash, the kernel refusing its writes",
    },
  },
  detect: (env) => detectCli({ bin: "opencode", verifiedRange: { min: VERIFIED, max: VERIFIED } }, env),
  buildCommand: buildOpencodeCommand,
  createTranslator: () => new OpencodeTranslator(),
};

type Json = Record<string, unknown>;

/** The caller's inline config (when it parses as an object), so caesar's settings add to it. */
function inheritedConfig(env: Readonly<Record<string, string>>): Json {
  const raw = env.OPENCODE_CONFIG_CONTENT;
  if (!raw) return {};
  try {
    return rec(JSON.parse(raw));
  } catch {
    return {};
  }
}

function permissionFor(launch: LaunchContext): Json {
  // Writes to the task directory (report.json) are outside the workspace: opencode asks, and a headless
  // run auto-rejects what it asks. Allow them explicitly, in both modes.
  const outside = Object.fromEntries(
    launch.extraDirs.flatMap((dir) => [
      [dir, "allow"],
      [`${dir}/*`, "allow"],
    ]),
  );
  if (launch.mode === "write") {
    return { bash: "allow", edit: "allow", webfetch: "allow", external_directory: outside };
  }
  // Edit rules match paths relative to the project (1.18): `../task/*` for a sibling task directory.
  const editable = Object.fromEntries(
    launch.extraDirs.flatMap((dir) => {
      const relativeDir = relative(launch.task.workspace, dir);
      return [
        [`${relativeDir}/*`, "allow"],
        [`${dir}/*`, "allow"],
      ];
    }),
  );
  // Under caesar's sandbox the kernel holds read-only: commands run, and whatever they write is refused.
  const bash = launch.sandboxed ? "allow" : "deny";
  return { bash, edit: { "*": "deny", ...editable }, external_directory: outside };
}

export function buildOpencodeCommand(launch: LaunchContext): CommandLine {
  const prompt = promptArg(launch);
  const inherited = inheritedConfig(launch.env);
  const config: Json = {
    ...inherited,
    // caesar's worktree and git are the record of changes: opencode's own snapshots (a copy of the
    // project per run, for its undo) cost seconds at start-up and are not needed.
    snapshot: false,
    permission: {
      ...rec(inherited.permission),
      ...permissionFor(launch),
      ...Object.fromEntries(launch.tools.excluded.map((tool) => [tool, "deny"])),
    },
  };
  if (launch.channel) {
    config.mcp = {
      ...rec(inherited.mcp),
      [launch.channel.name]: {
        type: "local",
        command: [launch.channel.command, ...launch.channel.args],
        environment: launch.channel.env,
        enabled: true,
      },
    };
  }
  // --title skips the model call opencode otherwise spends on naming the session.
  const args = ["run", "--format", "json", "--title", `caesar ${launch.task.id}`];
  if (launch.resume) args.push("--session", launch.resume);
  if (launch.model) args.push("--model", launch.model);
  args.push(...launch.extraArgs, "--", prompt.text);
  const command: CommandLine = {
    bin: "opencode",
    args,
    env: {
      OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
      // opencode 1.18 takes its project directory from $PWD, not from the process's working directory.
      PWD: launch.task.workspace,
    },
    cwd: launch.task.workspace,
    files: prompt.files,
    display: displayCommand("opencode", args),
  };
  return launch.sandboxed ? withSandboxHome(command, opencodeSandboxHome(launch)) : command;
}

/**
 * Under caesar's sandbox: the XDG folders opencode keeps everything in (its database, sessions, the npm
 * cache of its plugins, a package.json it writes in its config folder) made per task, with the user's
 * opencode.json(c), AGENTS.md and auth.json linked in (read-only inside). opencode has no sandbox of its
 * own: caesar's holds its files (docs/adapters.md).
 */
export function opencodeSandboxHome(launch: LaunchContext): SandboxHome {
  const userConfig = join(userStateDir(launch, "XDG_CONFIG_HOME", ".config"), "opencode");
  const userData = join(userStateDir(launch, "XDG_DATA_HOME", ".local/share"), "opencode");
  const home = sandboxHome(launch, "opencode-home", userConfig, []);
  const config = join(home.home, "config");
  const data = join(home.home, "data");
  for (const name of ["opencode.json", "opencode.jsonc", "AGENTS.md"])
    seedInto(home, join(config, "opencode"), userConfig, { name, how: "link" });
  seedInto(home, join(data, "opencode"), userData, { name: "auth.json", how: "link" });
  home.env.XDG_CONFIG_HOME = config;
  home.env.XDG_DATA_HOME = data;
  home.files.push({ path: join(config, "opencode", ".caesar-sandbox-home"), content: "" });
  home.files.push({ path: join(data, "opencode", ".caesar-sandbox-home"), content: "" });
  return home;
}

const REJECTED = /rejected permission|prevents you from using|permission.*denied/i;

export class OpencodeTranslator extends StateTranslator {
  stdout(line: string): EventBody[] {
    const event = parseObjectLine(line);
    if (!event) return [];
    this.state.session ??= str(event.sessionID);
    const part = rec(event.part);
    switch (event.type) {
      case "tool_use":
        return this.tool(part);
      case "text":
        return this.state.message(str(part.text) ?? "");
      case "reasoning": {
        const text = str(part.text) ?? "";
        return text ? [{ type: "thinking", text }] : [];
      }
      case "step_finish": {
        const tokens = rec(part.tokens);
        this.state.addUsage(num(tokens.input), num(tokens.output));
        return [];
      }
      case "error": {
        const error = rec(event.error);
        const data = rec(error.data);
        const message = str(data.message) ?? str(error.name) ?? "error";
        const failure = this.state.fail(message, int(data.statusCode));
        return this.state.errorEvent(message, failure.code);
      }
      default:
        return [];
    }
  }

  private tool(part: Record<string, unknown>): EventBody[] {
    const state = rec(part.state);
    const id = str(part.callID) ?? str(part.id);
    const tool = str(part.tool) ?? "";
    const input = summarizeToolInput(state.input);
    const status = str(state.status);
    if (status === "pending" || status === "running") return this.state.tools.start(id, tool, input);
    if (status !== "completed" && status !== "error") return [];
    const exitCode = int(rec(state.metadata).exit);
    const ok = status === "completed" && (exitCode === undefined || exitCode === 0);
    const output = status === "error" ? (str(state.error) ?? "error") : str(state.output);
    if (status === "error" && REJECTED.test(output ?? ""))
      this.state.denied(tool, output ?? "", `denied\n${id}`);
    if (tool === "invalid") {
      this.state.addFinding({
        severity: "medium",
        title: "Tool unavailable",
        detail: summarizeToolInput(state.input),
      });
    }
    const events = this.state.tools.end(id, {
      ok,
      tool,
      input,
      output,
      ...(exitCode !== undefined ? { exitCode } : {}),
    });
    if (ok) events.push(...fileChangedFor(tool, state.input));
    return events;
  }
}
