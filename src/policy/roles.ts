import type { AgentAdapter } from "../agents/adapter.js";
import { type EffectiveConfig, roleValues } from "../config/effective.js";
import type { RoleConfig } from "../config/schema.js";
import { closestMatch } from "../support/closest.js";
import { CaesarError, UsageError } from "../support/errors.js";
import { admissionOf } from "./admission.js";

export function findRole(config: EffectiveConfig, name: string): RoleConfig {
  const role = config.roles[name];
  if (role) return roleValues(role);
  const known = Object.keys(config.roles);
  const hint = closestMatch(name, known);
  throw new UsageError("unknown_role", `Unknown role "${name}".${hint ? ` Did you mean "${hint}"?` : ""}`, {
    detail: `Known roles: ${known.join(", ")}. Add one with \`caesar role add <name> --agents a,b\`.`,
  });
}

/**
 * A role picks the first agent of its list that is installed and allowed; each skip is explained. For a
 * task sent to other machines (`installedHere` false), whether it is installed here does not matter.
 */
export async function pickRoleAgent(
  config: EffectiveConfig,
  role: RoleConfig,
  adapters: AgentAdapter[],
  installedHere = true,
): Promise<AgentAdapter> {
  const candidates = role.agents ?? [];
  const skipped: string[] = [];
  for (const id of candidates) {
    const adapter = adapters.find((a) => a.id === id);
    if (!adapter) {
      skipped.push(`${id}: unknown agent`);
      continue;
    }
    const admission = admissionOf(config, id);
    if (!admission.allowed) {
      skipped.push(`${id}: ${admission.reason}`);
      continue;
    }
    const detection = installedHere ? await adapter.detect() : { installed: true };
    if (!detection.installed) {
      skipped.push(`${id}: not installed`);
      continue;
    }
    return adapter;
  }
  throw new CaesarError("role_no_agent", `Role "${role.name}" has no agent that is installed and allowed.`, {
    detail: `${candidates.length === 0 ? "Its agents list is empty." : skipped.join("\n")}\nInstall one, allow one (\`caesar policy allow <id>\`), or change the role's agents (\`caesar role add ${role.name} --agents <ids>\`).`,
  });
}
