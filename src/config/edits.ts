import type { EffectiveConfig, FileLayer } from "./effective.js";
import type { CustomAgentConfig, RoleConfig } from "./schema.js";
import { arrayOf, editLayer, type LayerEdit, type TomlDocument, tableOf } from "./write.js";

/**
 * The edits configuration commands make. Each writes one layer, only what that layer declares; when a
 * list must change in a layer that did not declare it, the list the user sees (the effective one) is
 * the starting point — otherwise the new declaration would silently drop entries of a lower layer.
 */
function listOf(document: TomlDocument, table: string, key: string, effective: string[]): string[] {
  const declared = tableOf(document, table)[key];
  return Array.isArray(declared) ? (declared as string[]) : [...effective];
}

export function allowAgent(
  root: string,
  layer: FileLayer,
  config: EffectiveConfig,
  id: string,
): Promise<LayerEdit> {
  return editLayer(root, layer, (document) => {
    const policy = tableOf(document, "policy");
    const denied = listOf(document, "policy", "denied", config.policy.denied.value);
    if (denied.includes(id) || Array.isArray(policy.denied))
      policy.denied = denied.filter((agent) => agent !== id);
    const allowed = listOf(document, "policy", "allowed", config.policy.allowed.value);
    if (allowed.length > 0 && !allowed.includes(id)) policy.allowed = [...allowed, id];
  });
}

export function denyAgent(
  root: string,
  layer: FileLayer,
  config: EffectiveConfig,
  id: string,
): Promise<LayerEdit> {
  return editLayer(root, layer, (document) => {
    const policy = tableOf(document, "policy");
    const denied = listOf(document, "policy", "denied", config.policy.denied.value);
    if (!denied.includes(id)) policy.denied = [...denied, id];
    const allowed = tableOf(document, "policy").allowed;
    if (Array.isArray(allowed) && allowed.includes(id))
      policy.allowed = allowed.filter((agent) => agent !== id);
  });
}

export function setAgentEnabled(
  root: string,
  layer: FileLayer,
  id: string,
  enabled: boolean,
): Promise<LayerEdit> {
  return editLayer(root, layer, (document) => {
    const settings = tableOf(tableOf(document, "agents"), id);
    settings.enabled = enabled;
  });
}

export function addCustomAgent(root: string, layer: FileLayer, agent: CustomAgentConfig): Promise<LayerEdit> {
  return editLayer(root, layer, (document) => {
    const agents = arrayOf(document, "agent");
    const entry: TomlDocument = { id: agent.id, bin: agent.bin };
    if (agent.protocol !== "oacp") entry.protocol = agent.protocol;
    if (agent.args) entry.args = agent.args;
    if (agent.cwd_mode !== "process") entry.cwd_mode = agent.cwd_mode;
    if (agent.display_name) entry.display_name = agent.display_name;
    if (agent.env && Object.keys(agent.env).length > 0) entry.env = agent.env;
    const index = agents.findIndex((existing) => existing.id === agent.id);
    if (index === -1) agents.push(entry);
    else agents[index] = { ...agents[index], ...entry };
  });
}

/** Remove a declaration from a layer; `false` when that layer does not declare it. */
export async function removeFromLayer(
  root: string,
  layer: FileLayer,
  key: "agent" | "role",
  field: "id" | "name",
  value: string,
): Promise<LayerEdit & { found: boolean }> {
  let found = false;
  const edit = await editLayer(root, layer, (document) => {
    const entries = document[key];
    if (!Array.isArray(entries)) return;
    const kept = (entries as TomlDocument[]).filter((entry) => entry[field] !== value);
    found = kept.length !== entries.length;
    if (!found) return;
    if (kept.length === 0) delete document[key];
    else document[key] = kept;
    if (key === "agent") {
      const settings = document.agents as TomlDocument | undefined;
      if (settings && value in settings) delete settings[value];
    }
  });
  return { ...edit, found };
}

/** Add a role to a layer, or update the fields given of the role that layer declares. */
export function upsertRole(root: string, layer: FileLayer, role: RoleConfig): Promise<LayerEdit> {
  return editLayer(root, layer, (document) => {
    const roles = arrayOf(document, "role");
    const fields = Object.fromEntries(Object.entries(role).filter(([, value]) => value !== undefined));
    const index = roles.findIndex((existing) => existing.name === role.name);
    if (index === -1) roles.push(fields);
    else roles[index] = { ...roles[index], ...fields };
  });
}
