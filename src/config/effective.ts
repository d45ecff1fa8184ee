import { homedir } from "node:os";
import { join } from "node:path";
import type { z } from "zod";
import { readConfigFile } from "./load.js";
import type { ConfigFile, CustomAgentConfig, PolicySchema, RoleConfig } from "./schema.js";

export type Layer = "default" | "global" | "project" | "local";

/** A value and where it came from. */
export interface Sourced<T> {
  value: T;
  source: Layer;
}

type Policy = Required<z.infer<typeof PolicySchema>>;

export const POLICY_DEFAULTS: Policy = {
  allowed: [],
  denied: [],
  max_parallel: 4,
  mode: "write",
  isolation: "auto",
  network: "auto",
  timeout: "30m",
  allow_inplace_write: false,
  allow_recursion: false,
  max_depth: 3,
  stall_notice: "2m",
};

export const WORKTREE_DEFAULTS = { copy: [] as string[], link: [] as string[], setup: [] as string[] };

export interface EffectiveConfig {
  policy: { [K in keyof Policy]: Sourced<Policy[K]> };
  worktree: { [K in keyof typeof WORKTREE_DEFAULTS]: Sourced<string[]> };
  models: Record<string, Sourced<string>>;
  agents: Record<string, Sourced<CustomAgentConfig>>;
  roles: Record<string, Sourced<RoleConfig>>;
  /** The files read, most general first, with their layer. */
  files: { layer: Exclude<Layer, "default">; path: string; present: boolean }[];
}

export function layerPaths(root: string, env: NodeJS.ProcessEnv = process.env) {
  const xdg =
    env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME !== "" ? env.XDG_CONFIG_HOME : join(homedir(), ".config");
  return {
    global: join(xdg, "caesar", "config.toml"),
    project: join(root, ".caesar", "config.toml"),
    local: join(root, ".caesar", "config.local.toml"),
  } as const;
}

/** Load the three layers and merge them, most specific winning field by field, keeping provenance. */
export async function loadConfig(
  root: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<EffectiveConfig> {
  const paths = layerPaths(root, env);
  const layers: [Exclude<Layer, "default">, string, ConfigFile | undefined][] = [];
  for (const layer of ["global", "project", "local"] as const) {
    layers.push([layer, paths[layer], await readConfigFile(paths[layer])]);
  }
  return mergeLayers(layers);
}

export function mergeLayers(
  layers: [Exclude<Layer, "default">, string, ConfigFile | undefined][],
): EffectiveConfig {
  const policy = Object.fromEntries(
    Object.entries(POLICY_DEFAULTS).map(([key, value]) => [key, { value, source: "default" }]),
  ) as EffectiveConfig["policy"];
  const worktree = Object.fromEntries(
    Object.entries(WORKTREE_DEFAULTS).map(([key, value]) => [key, { value, source: "default" }]),
  ) as EffectiveConfig["worktree"];
  const models: EffectiveConfig["models"] = {};
  const agents: EffectiveConfig["agents"] = {};
  const roles: EffectiveConfig["roles"] = {};
  for (const [layer, , file] of layers) {
    if (!file) continue;
    for (const [key, value] of Object.entries(file.policy ?? {})) {
      if (value !== undefined) (policy as Record<string, Sourced<unknown>>)[key] = { value, source: layer };
    }
    for (const [key, value] of Object.entries(file.worktree ?? {})) {
      if (value !== undefined) (worktree as Record<string, Sourced<unknown>>)[key] = { value, source: layer };
    }
    for (const [agent, model] of Object.entries(file.models ?? {}))
      models[agent] = { value: model, source: layer };
    for (const agent of file.agent ?? []) agents[agent.id] = { value: agent, source: layer };
    for (const role of file.role ?? []) roles[role.name] = { value: role, source: layer };
  }
  return {
    policy,
    worktree,
    models,
    agents,
    roles,
    files: layers.map(([layer, path, file]) => ({ layer, path, present: file !== undefined })),
  };
}
