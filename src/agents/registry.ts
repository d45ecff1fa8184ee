import { dirname } from "node:path";
import type { EffectiveConfig } from "../config/effective.js";
import { closestMatch } from "../support/closest.js";
import { UsageError } from "../support/errors.js";
import { ACP_ADAPTERS } from "./acp/clis.js";
import type { AgentAdapter } from "./adapter.js";
import { BUILTIN_ADAPTERS } from "./catalog.js";
import { makeCustomAdapter } from "./custom.js";
import { referenceAdapter } from "./reference.js";

/**
 * Every agent caesar knows in this project: the reference agent, the built-in CLIs, their ACP modes, then
 * `[[agent]]` entries.
 */
export function listAdapters(config: EffectiveConfig, projectRoot: string): AgentAdapter[] {
  const byId = new Map<string, AgentAdapter>();
  for (const adapter of [referenceAdapter, ...BUILTIN_ADAPTERS, ...ACP_ADAPTERS])
    byId.set(adapter.id, adapter);
  // A custom entry with a built-in's id replaces it: the user's declaration wins.
  // A bare `bin` is looked for beside the file that declares it (custom-bin.ts).
  for (const { value, source } of Object.values(config.agents)) {
    const file = config.files.find((candidate) => candidate.layer === source)?.path;
    byId.set(value.id, makeCustomAdapter(value, projectRoot, file ? dirname(file) : undefined));
  }
  return [...byId.values()];
}

export function findAdapter(config: EffectiveConfig, projectRoot: string, id: string): AgentAdapter {
  const adapters = listAdapters(config, projectRoot);
  const adapter = adapters.find((candidate) => candidate.id === id);
  if (adapter) return adapter;
  const ids = adapters.map((candidate) => candidate.id);
  const hint = closestMatch(id, ids);
  throw new UsageError("unknown_agent", `Unknown agent "${id}".${hint ? ` Did you mean "${hint}"?` : ""}`, {
    detail: `Known agents: ${ids.join(", ")}. Declare your own under [[agent]] in .caesar/config.toml.`,
  });
}
