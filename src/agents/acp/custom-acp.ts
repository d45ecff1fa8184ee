import type { CustomAgentConfig } from "../../config/schema.js";
import { UsageError } from "../../support/errors.js";
import { findExecutable } from "../../support/executable-path.js";
import type { SessionAgentAdapter } from "../adapter.js";
import { substituteArgs, validateArgTokens } from "../arg-tokens.js";
import { resolveCustomBin } from "../custom-bin.js";
import { ACP_MCP, ACP_NATIVE_SCHEMA, ACP_RESUME, makeAcpAdapter } from "./acp-adapter.js";

/**
 * An `[[agent]]` with `protocol = "acp"`: any program that speaks the Agent Client Protocol on stdio.
 * caesar serves it files inside the workspace and answers its permission requests by policy; what it
 * does without asking, caesar cannot stop (git reconciliation reports it).
 */
export function makeCustomAcpAdapter(
  config: CustomAgentConfig,
  projectRoot: string,
  declaredIn?: string,
): SessionAgentAdapter {
  const args = config.args ?? [];
  validateAcpArgs(config.id, args);
  const bin = resolveCustomBin(config.bin, projectRoot, declaredIn);
  return makeAcpAdapter({
    id: config.id,
    displayName: config.display_name ?? config.id,
    kind: "custom",
    product: config.id,
    bin,
    capabilities: {
      network: { value: "open", why: "a plain process: caesar does not sandbox it" },
      readOnly: {
        value: "none",
        why: "caesar refuses every edit it asks permission for and every write through fs/write_text_file, but cannot stop a write it does without asking; git reconciliation reports any",
      },
      tools: { value: "none", why: "an ACP agent: tools are judged one permission request at a time" },
      nativeSchema: ACP_NATIVE_SCHEMA,
      mcp: ACP_MCP,
      resume: ACP_RESUME,
      model: args.some((arg) => arg.includes("{{model}}"))
        ? { value: true, why: "args carries {{model}}" }
        : {
            value: true,
            why: "the session's `model` config option, when the agent offers one (else a finding)",
          },
    },
    fs: { read: true, write: true },
    modelByConfigOption: !args.some((arg) => arg.includes("{{model}}")),
    command(launch) {
      return {
        args: substituteArgs(args, {
          workspace: launch.task.workspace,
          taskDir: launch.paths.dir,
          reportPath: launch.paths.report,
          ...(launch.model ? { model: launch.model } : {}),
        }),
        env: { ...(config.env ?? {}) },
      };
    },
    async detect(env = process.env) {
      const path = findExecutable(bin, env);
      return path ? { installed: true, path } : { installed: false };
    },
  });
}

/** An ACP agent's brief goes in session/prompt and it runs in its session's directory. */
function validateAcpArgs(agentId: string, args: string[]): void {
  if (args.some((arg) => arg.includes("{{prompt}}"))) {
    throw new UsageError(
      "config_acp_prompt",
      `Agent "${agentId}": an ACP agent takes no {{prompt}} in args.`,
      {
        detail:
          'caesar sends the brief in session/prompt. Remove "{{prompt}}" from its args in .caesar/config.toml.',
      },
    );
  }
  // Unknown tokens are refused the same way as for any agent.
  validateArgTokens(agentId, [...args, "{{prompt}}"], "process");
}
