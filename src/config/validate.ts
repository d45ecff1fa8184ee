import { closestMatch } from "../support/closest.js";
import { UsageError } from "../support/errors.js";
import { BUILTIN_AGENT_IDS } from "./builtin-agents.js";
import type { EffectiveConfig, Layer } from "./effective.js";

/**
 * Checks across layers that no single file can make: a delegate target must be another agent that exists,
 * listed once; a risk profile must be declared somewhere (or be `default`). Each problem names the file
 * that set the value and the key. Refused at load, like an unknown key, so an impossible policy is never
 * half applied.
 */
export function validateMergedConfig(config: EffectiveConfig): void {
  const problems: string[] = [];
  const agents = [...new Set([...BUILTIN_AGENT_IDS, ...Object.keys(config.agents)])];
  const profiles = [...new Set(["default", ...Object.keys(config.riskProfiles)])];
  const fileOf = (layer: Layer) => config.files.find((file) => file.layer === layer)?.path ?? layer;
  for (const [id, settings] of Object.entries(config.agentSettings)) {
    const delegates = settings.delegates;
    if (delegates) {
      const seen = new Set<string>();
      delegates.value.forEach((entry, index) => {
        const target = (typeof entry === "string" ? entry : entry.agent).trim();
        const key = `${fileOf(delegates.source)}: agents.${id}.delegates[${index}] = "${target}"`;
        if (target === id)
          problems.push(`${key} names this agent itself; an agent cannot delegate to itself`);
        else if (!agents.includes(target)) {
          const hint = closestMatch(target, agents);
          problems.push(
            `${key} but agents.${target} is not configured (no built-in agent or [[agent]] has that id)${hint ? ` — did you mean "${hint}"?` : ""}`,
          );
        } else if (seen.has(target)) problems.push(`${key} duplicates an earlier delegate target`);
        seen.add(target);
      });
    }
    const profile = settings.risk_profile;
    if (profile && !profiles.includes(profile.value)) {
      const hint = closestMatch(profile.value, profiles);
      problems.push(
        `${fileOf(profile.source)}: agents.${id}.risk_profile = "${profile.value}" names no [risk_profiles.${profile.value}] table in any layer${hint ? ` — did you mean "${hint}"?` : ""}`,
      );
    }
  }
  if (problems.length === 0) return;
  throw new UsageError(
    "config_invalid",
    problems.length === 1 ? problems[0]! : `The configuration has ${problems.length} errors.`,
    {
      detail: [
        ...(problems.length === 1 ? [] : problems),
        "Fix the entries named, or remove them (`caesar policy show` and `caesar agents list` show every value with the layer it comes from).",
      ].join("\n"),
    },
  );
}
