import { REFERENCE_AGENT_SCRIPT } from "../support/package-paths.js";
import type { CommandLine, LaunchContext, LineAgentAdapter } from "./adapter.js";
import { PlainTextTranslator } from "./plain-text-translator.js";

export { REFERENCE_AGENT_SCRIPT };

/**
 * caesar's reference agent: a conformant OACP program with no model behind it, for `caesar demo`,
 * for trying a setup offline, and as an example to copy.
 */
export const referenceAdapter: LineAgentAdapter = {
  id: "reference",
  displayName: "Reference agent (bundled)",
  kind: "builtin",
  product: "reference",
  capabilities: {
    network: {
      value: "open",
      why: "a plain Node process; it never uses the network, but caesar does not cut it",
    },
    readOnly: { value: "policy", why: "the script itself refuses to write in read-only mode; no OS sandbox" },
    tools: { value: "none", why: "it has two fixed tools of its own" },
    nativeSchema: { value: false, why: "it writes $CAESAR_REPORT_PATH (the file tier)" },
    mcp: { value: false, why: "it does not load MCP servers" },
    resume: { value: false, why: "stateless" },
    model: { value: false, why: "no model behind it" },
  },
  async detect() {
    return { installed: true, path: REFERENCE_AGENT_SCRIPT, version: "1" };
  },
  buildCommand(launch: LaunchContext): CommandLine {
    return {
      bin: process.execPath,
      args: [REFERENCE_AGENT_SCRIPT, ...launch.extraArgs],
      env: {},
      cwd: launch.task.workspace,
      display: `reference-agent ${launch.extraArgs.join(" ")}`.trim(),
    };
  },
  createTranslator: () => new PlainTextTranslator(),
};
