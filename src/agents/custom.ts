import type { CustomAgentConfig } from "../config/schema.js";
import { findExecutable } from "../support/executable-path.js";
import { makeCustomAcpAdapter } from "./acp/custom-acp.js";
import type { AgentAdapter, AgentCapabilities, CommandLine, Detection, LaunchContext } from "./adapter.js";
import { substituteArgs, validateArgTokens } from "./arg-tokens.js";
import { resolveCustomBin } from "./custom-bin.js";
import { PlainTextTranslator } from "./plain-text-translator.js";

/** An OACP agent's arguments when its entry gives none: the brief. */
export const DEFAULT_ARGS = ["{{prompt}}"];

const CUSTOM_CAPABILITIES: AgentCapabilities = {
  network: {
    value: "open",
    why: "a plain process: caesar does not sandbox it, so the network stays available",
  },
  readOnly: {
    value: "none",
    why: "nothing stops the program from writing; git reconciliation reports any write",
  },
  tools: { value: "none", why: "a plain program: caesar cannot remove its tools" },
  nativeSchema: {
    value: false,
    why: "no structured-output mode known; the report comes from $CAESAR_REPORT_PATH",
  },
  mcp: { value: false, why: "caesar does not know how to hand this program an MCP server" },
  resume: { value: false, why: "no session to resume" },
  model: { value: false, why: "set by a {{model}} token in args, when present" },
};

/**
 * An agent declared under `[[agent]]`: a program that speaks OACP through its files, or (`protocol =
 * "acp"`) an ACP agent caesar drives over stdio.
 */
export function makeCustomAdapter(
  config: CustomAgentConfig,
  projectRoot: string,
  declaredIn?: string,
): AgentAdapter {
  if (config.protocol === "acp") return makeCustomAcpAdapter(config, projectRoot, declaredIn);
  const configArgs = config.args ?? DEFAULT_ARGS;
  validateArgTokens(config.id, configArgs, config.cwd_mode);
  const usesModel = configArgs.some((arg) => arg.includes("{{model}}"));
  const bin = resolveCustomBin(config.bin, projectRoot, declaredIn);
  return {
    id: config.id,
    displayName: config.display_name ?? config.id,
    kind: "custom",
    product: config.id,
    capabilities: {
      ...CUSTOM_CAPABILITIES,
      model: usesModel
        ? { value: true, why: "args carries {{model}}" }
        : { value: false, why: "args has no {{model}} token" },
    },
    async detect(env = process.env): Promise<Detection> {
      const path = findExecutable(bin, env, projectRoot);
      return path ? { installed: true, path } : { installed: false };
    },
    buildCommand(launch: LaunchContext): CommandLine {
      const args = [
        ...substituteArgs(configArgs, {
          prompt: launch.prompt,
          workspace: launch.task.workspace,
          taskDir: launch.paths.dir,
          reportPath: launch.paths.report,
          ...(launch.model ? { model: launch.model } : {}),
        }),
        ...launch.extraArgs,
      ];
      return {
        bin,
        args,
        env: { ...(config.env ?? {}) },
        cwd: config.cwd_mode === "process" ? launch.task.workspace : launch.paths.dir,
        display: [config.bin, ...args.map((arg) => (arg === launch.prompt ? "<prompt>" : arg))].join(" "),
      };
    },
    createTranslator: () => new PlainTextTranslator(),
  };
}
