import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { AgentAdapter } from "../agents/adapter.js";
import { listAdapters } from "../agents/registry.js";
import { type EffectiveConfig, loadConfig, roleValues, settingsOf } from "../config/effective.js";
import type { Reach } from "../policy/reach.js";
import { pickRoleAgent } from "../policy/roles.js";
import { messageOf } from "../support/errors.js";
import { callerOf, type OrchestratorContext } from "./context.js";
import { reachOfCaller } from "./roster.js";
import { runTool, toolResult } from "./tool-result.js";

/** caesar_list_agents and caesar_list_roles: who can be delegated to, and the configured roles. */
export function registerCatalogTools(server: McpServer, context: OrchestratorContext): void {
  server.registerTool(
    "caesar_list_agents",
    {
      title: "List the agents tasks can go to",
      description: [
        "The coding agents caesar knows in this project — the built-in CLIs, `[[agent]]` entries of the configuration and the bundled `reference` agent — with, for each: whether it is installed (and its version), whether **you** may delegate to it now (`allowed`, and `not_allowed_because` / `remedy` when not: the policy, and from inside a task the delegation rules — depth, recursion, the delegation policy, reachability), its default model, and what caesar can really control about it (network, read-only enforcement, native report schema, MCP return channel, resume, model choice).",
        "Use it to choose `agent` for caesar_delegate, caesar_fanout and caesar_race.",
      ].join(" "),
      inputSchema: {},
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async () =>
      runTool(async () => {
        const caller = await callerOf(context, "caesar_list_agents");
        const { config, asking, agents: reached } = await reachOfCaller(context, caller);
        const agents = await Promise.all(
          reached.map(({ adapter, reach }) => describeAgent(adapter, reach, config, context.env)),
        );
        return toolResult({
          caller: asking ? { task_id: asking.id, agent: asking.agent, depth: asking.depth } : null,
          agents,
        });
      }),
  );

  server.registerTool(
    "caesar_list_roles",
    {
      title: "List the configured roles",
      description:
        "The roles configured for this project (`[[role]]` in .caesar/config.toml and its layers): name, purpose, the agents it may use (it picks the first installed and allowed one: `picks_now`), and the defaults it sets (mode, isolation, network, timeout, model). Pass `role` to caesar_delegate instead of `agent` to use one.",
      inputSchema: {},
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async () =>
      runTool(async () => {
        const config = await loadConfig(context.root, context.env);
        const adapters = listAdapters(config, context.root);
        const roles = await Promise.all(
          Object.values(config.roles).map(async (effective) => {
            const role = roleValues(effective);
            const picks = await pickRoleAgent(config, role, adapters).then(
              (adapter) => ({ agent: adapter.id, why_none: null }),
              (error: unknown) => ({ agent: null, why_none: messageOf(error) }),
            );
            return {
              name: role.name,
              purpose: role.purpose ?? null,
              agents: role.agents ?? [],
              picks_now: picks.agent,
              why_no_agent: picks.why_none,
              mode: role.mode ?? null,
              isolation: role.isolation ?? null,
              network: role.network ?? null,
              timeout: role.timeout ?? null,
              model: role.model ?? null,
              has_system_prompt: role.system_prompt_file !== undefined,
            };
          }),
        );
        return toolResult(
          { roles },
          roles.length === 0
            ? "No roles configured: add [[role]] entries to .caesar/config.toml."
            : undefined,
        );
      }),
  );
}

async function describeAgent(
  adapter: AgentAdapter,
  reach: Reach,
  config: EffectiveConfig,
  env: NodeJS.ProcessEnv,
) {
  const detection = await adapter.detect(env).catch((error) => ({
    installed: false,
    warning: `detection failed: ${messageOf(error)}`,
  }));
  const caps = adapter.capabilities;
  return {
    id: adapter.id,
    display_name: adapter.displayName,
    kind: adapter.kind,
    installed: detection.installed,
    version: "version" in detection ? (detection.version ?? null) : null,
    warning: detection.warning ?? null,
    allowed: reach.allowed,
    not_allowed_because: reach.reason,
    remedy: reach.remedy,
    delegation: reach.delegation,
    risk_profile: settingsOf(config, adapter.id).risk_profile.value,
    default_model: config.models[adapter.id]?.value ?? null,
    capabilities: {
      network: caps.network.value,
      read_only: caps.readOnly.value,
      native_report_schema: caps.nativeSchema.value,
      return_channel: caps.mcp.value,
      resume: caps.resume.value,
      model: caps.model.value,
    },
  };
}
