import { homedir, userInfo } from "node:os";
import { join } from "node:path";
import type * as z from "../support/zod.js";
import { DEFAULT_ROLES } from "./default-roles.js";
import { readConfigFile } from "./load.js";
import type {
  AgentSettings,
  ConfigFile,
  CustomAgentConfig,
  FollowUp,
  PolicySchema,
  RiskProfile,
  RoleConfig,
} from "./schema.js";
import { validateMergedConfig } from "./validate.js";

export type Layer = "default" | "global" | "project" | "local";
export type FileLayer = Exclude<Layer, "default">;

/** A value and where it came from. */
export interface Sourced<T> {
  value: T;
  source: Layer;
}

type Policy = Required<
  Omit<z.infer<typeof PolicySchema>, "max_tasks_per_hour" | "max_cost_per_day" | "max_actions_per_hour">
> & {
  max_tasks_per_hour: number | null;
  max_cost_per_day: number | null;
  max_actions_per_hour: number | null;
};

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
  max_tasks_per_hour: null,
  max_cost_per_day: null,
  // Unlimited unless set: the delegation reference's default (20) would stop most coding tasks, whose
  // agents make hundreds of tool calls an hour (docs/departures.md).
  max_actions_per_hour: null,
};

/** `[cluster]`: unset keys stay null (nats null: tasks run on this machine). */
export const CLUSTER_DEFAULTS = {
  nats: null as string[] | null,
  remote: "origin",
  credentials: null as string | null,
  nkey: null as string | null,
  token_file: null as string | null,
  user: null as string | null,
  password_file: null as string | null,
  tls_ca: null as string | null,
  tls_cert: null as string | null,
  tls_key: null as string | null,
  on_worker_loss: "retry" as "retry" | "fail",
  max_attempts: 3,
  heartbeat_timeout: "30s",
  retry: {} as { attempts?: number; backoff?: string; on?: string[] },
  keep_results: "30d",
  replicas: 1,
  queue: null as string | null,
};

/**
 * What a sandboxed agent reaches, besides its model, when its task has the network: the package registries
 * its commands install from (reading them needs no credential, and the sandbox hides the user's).
 */
export const DEFAULT_ALLOW_HOSTS = [
  "registry.npmjs.org",
  "registry.yarnpkg.com",
  "pypi.org",
  "files.pythonhosted.org",
  "crates.io",
  "index.crates.io",
  "static.crates.io",
  "proxy.golang.org",
  "sum.golang.org",
  "rubygems.org",
  "repo.maven.apache.org",
  "github.com",
  "codeload.github.com",
  "objects.githubusercontent.com",
  "raw.githubusercontent.com",
];

export const SANDBOX_DEFAULTS = {
  mode: "auto" as "required" | "auto" | "off",
  allow_hosts: DEFAULT_ALLOW_HOSTS as string[],
  mask_keys: true as boolean,
};

/** `[telemetry]`: unset keys stay null (the OTEL_* variables, or off). */
export const TELEMETRY_DEFAULTS = {
  enabled: null as boolean | null,
  endpoint: null as string | null,
  protocol: null as "http/protobuf" | "http/json" | null,
  service_name: null as string | null,
  resource_attributes: {} as Record<string, string>,
};

export const WORKTREE_DEFAULTS = { copy: [] as string[], link: [] as string[], setup: [] as string[] };

export const CHECKS_DEFAULTS = {
  default: [] as string[],
  timeout: "10m",
  attempts: 1,
  follow_up: "resume" as FollowUp,
};

export interface DelegateTarget {
  agent: string;
  mode: "bounded" | "independent";
}

export interface EffectiveAgentSettings {
  enabled: Sourced<boolean>;
  risk_profile: Sourced<string>;
  delegate_same_risk_profile: Sourced<boolean>;
  delegates: Sourced<DelegateTarget[]>;
  allowed_tools: Sourced<string[] | null>;
  excluded_tools: Sourced<string[]>;
  /** The agent's default task time (a duration), null: `[policy] timeout`. */
  timeout: Sourced<string | null>;
}

export interface EffectiveRiskProfile {
  delegation_mode: Sourced<"forbidden" | "allow">;
  max_tasks_per_hour: Sourced<number | null>;
  max_cost_per_day: Sourced<number | null>;
  max_actions_per_hour: Sourced<number | null>;
  /** null: no restriction (an empty list in the file means the same, as in the delegation reference). */
  allowed_tools: Sourced<string[] | null>;
  excluded_tools: Sourced<string[]>;
  /** Its non-blank `always_ask` entries, trimmed (blank ones are dropped, as the delegation reference does). */
  always_ask: Sourced<string[]>;
}

type RoleFields = Omit<RoleConfig, "name">;
export type EffectiveRole = { name: string } & { [K in keyof RoleFields]-?: Sourced<RoleFields[K]> };

export interface EffectiveConfig {
  policy: { [K in keyof Policy]: Sourced<Policy[K]> };
  worktree: { [K in keyof typeof WORKTREE_DEFAULTS]: Sourced<string[]> };
  cluster: { [K in keyof typeof CLUSTER_DEFAULTS]: Sourced<(typeof CLUSTER_DEFAULTS)[K]> };
  checks: { [K in keyof typeof CHECKS_DEFAULTS]: Sourced<(typeof CHECKS_DEFAULTS)[K]> };
  sandbox: { [K in keyof typeof SANDBOX_DEFAULTS]: Sourced<(typeof SANDBOX_DEFAULTS)[K]> };
  telemetry: { [K in keyof typeof TELEMETRY_DEFAULTS]: Sourced<(typeof TELEMETRY_DEFAULTS)[K]> };
  models: Record<string, Sourced<string>>;
  /** `[[agent]]` entries: the most specific layer's declaration of an id wins whole. */
  agents: Record<string, Sourced<CustomAgentConfig>>;
  /** `[agents.<id>]` tables, merged field by field. */
  agentSettings: Record<string, { [K in keyof AgentSettings]: Sourced<NonNullable<AgentSettings[K]>> }>;
  riskProfiles: Record<string, { [K in keyof RiskProfile]: Sourced<NonNullable<RiskProfile[K]>> }>;
  roles: Record<string, EffectiveRole>;
  /** The files read, most general first, with their layer. */
  files: { layer: FileLayer; path: string; present: boolean }[];
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

/**
 * The global layer's path from the account database (getpwuid), not from HOME or XDG_CONFIG_HOME: for a
 * nested request whose tree recorded none, no variable its agent sets can choose the file.
 */
export function defaultGlobalConfigPath(): string {
  return join(userInfo().homedir, ".config", "caesar", "config.toml");
}

export interface LoadOptions {
  /** Read the global layer from this file instead of the one the environment names. */
  globalPath?: string;
}

/** Load the three layers and merge them, most specific winning field by field, keeping provenance. */
export async function loadConfig(
  root: string,
  env: NodeJS.ProcessEnv = process.env,
  options: LoadOptions = {},
): Promise<EffectiveConfig> {
  const paths = { ...layerPaths(root, env), ...(options.globalPath ? { global: options.globalPath } : {}) };
  const layers: [FileLayer, string, ConfigFile | undefined][] = [];
  for (const layer of ["global", "project", "local"] as const) {
    layers.push([layer, paths[layer], await readConfigFile(paths[layer])]);
  }
  const config = mergeLayers(layers);
  validateMergedConfig(config);
  return config;
}

function sourcedDefaults<T extends object>(defaults: T): { [K in keyof T]: Sourced<T[K]> } {
  return Object.fromEntries(
    Object.entries(defaults).map(([key, value]) => [key, { value, source: "default" }]),
  ) as {
    [K in keyof T]: Sourced<T[K]>;
  };
}

/** Copy every defined field of `from` onto `into`, tagged with its layer. */
function overlay(into: Record<string, Sourced<unknown>>, from: object | undefined, layer: Layer): void {
  for (const [key, value] of Object.entries(from ?? {})) {
    if (value !== undefined) into[key] = { value, source: layer };
  }
}

export function mergeLayers(layers: [FileLayer, string, ConfigFile | undefined][]): EffectiveConfig {
  const config: EffectiveConfig = {
    policy: sourcedDefaults(POLICY_DEFAULTS),
    worktree: sourcedDefaults(WORKTREE_DEFAULTS),
    cluster: sourcedDefaults(CLUSTER_DEFAULTS),
    checks: sourcedDefaults(CHECKS_DEFAULTS),
    sandbox: sourcedDefaults(SANDBOX_DEFAULTS),
    telemetry: sourcedDefaults(TELEMETRY_DEFAULTS),
    models: {},
    agents: {},
    agentSettings: {},
    riskProfiles: {},
    roles: {},
    files: layers.map(([layer, path, file]) => ({ layer, path, present: file !== undefined })),
  };
  for (const role of DEFAULT_ROLES) mergeRole(config, role, "default");
  for (const [layer, , file] of layers) {
    if (!file) continue;
    overlay(config.policy as Record<string, Sourced<unknown>>, file.policy, layer);
    overlay(config.worktree as Record<string, Sourced<unknown>>, file.worktree, layer);
    overlay(config.checks as Record<string, Sourced<unknown>>, file.checks, layer);
    overlay(config.sandbox as Record<string, Sourced<unknown>>, file.sandbox, layer);
    overlay(config.telemetry as Record<string, Sourced<unknown>>, file.telemetry, layer);
    overlay(config.models as Record<string, Sourced<unknown>>, file.models, layer);
    overlay(config.cluster as Record<string, Sourced<unknown>>, clusterValues(file.cluster), layer);
    for (const agent of file.agent ?? []) config.agents[agent.id] = { value: agent, source: layer };
    for (const [id, settings] of Object.entries(file.agents ?? {})) {
      config.agentSettings[id] ??= {};
      overlay(config.agentSettings[id] as Record<string, Sourced<unknown>>, settings, layer);
    }
    for (const [name, profile] of Object.entries(file.risk_profiles ?? {})) {
      config.riskProfiles[name] ??= {};
      overlay(config.riskProfiles[name] as Record<string, Sourced<unknown>>, profile, layer);
    }
    for (const role of file.role ?? []) mergeRole(config, role, layer);
  }
  return config;
}

/** `nats` may be one URL or a list: always a list here. */
function clusterValues(cluster: ConfigFile["cluster"]): object | undefined {
  if (!cluster) return undefined;
  const { nats, ...rest } = cluster;
  return nats === undefined ? rest : { ...rest, nats: Array.isArray(nats) ? nats : [nats] };
}

const ROLE_FIELDS = [
  "purpose",
  "agents",
  "mode",
  "isolation",
  "network",
  "timeout",
  "model",
  "system_prompt_file",
  "checks",
] as const;

function mergeRole(config: EffectiveConfig, role: RoleConfig, layer: Layer): void {
  const current =
    config.roles[role.name] ??
    ({
      name: role.name,
      ...Object.fromEntries(ROLE_FIELDS.map((f) => [f, { value: undefined, source: "default" }])),
    } as EffectiveRole);
  for (const field of ROLE_FIELDS) {
    const value = role[field];
    if (value !== undefined)
      (current as unknown as Record<string, Sourced<unknown>>)[field] = { value, source: layer };
  }
  config.roles[role.name] = current;
}

/** A role as plain values. */
export function roleValues(role: EffectiveRole): RoleConfig {
  const out: Record<string, unknown> = { name: role.name };
  for (const field of ROLE_FIELDS) if (role[field].value !== undefined) out[field] = role[field].value;
  return out as RoleConfig;
}

/** The effective `[agents.<id>]` settings of an agent, with their defaults. */
export function settingsOf(config: EffectiveConfig, id: string): EffectiveAgentSettings {
  const declared = config.agentSettings[id] ?? {};
  const custom = config.agents[id];
  const enabled: Sourced<boolean> =
    declared.enabled ??
    (custom?.value.enabled !== undefined
      ? { value: custom.value.enabled, source: custom.source }
      : { value: true, source: "default" });
  return {
    enabled,
    risk_profile: declared.risk_profile ?? { value: "default", source: "default" },
    delegate_same_risk_profile: declared.delegate_same_risk_profile ?? { value: true, source: "default" },
    delegates: declared.delegates
      ? {
          value: declared.delegates.value.map((entry) =>
            typeof entry === "string"
              ? { agent: entry, mode: "bounded" as const }
              : { agent: entry.agent, mode: entry.mode },
          ),
          source: declared.delegates.source,
        }
      : { value: [], source: "default" },
    allowed_tools: declared.allowed_tools ?? { value: null, source: "default" },
    excluded_tools: declared.excluded_tools ?? { value: [], source: "default" },
    timeout: declared.timeout ?? { value: null, source: "default" },
  };
}

/** The effective `[risk_profiles.<name>]`, with defaults (delegation forbidden; budgets from [policy]). */
export function riskProfileOf(config: EffectiveConfig, name: string): EffectiveRiskProfile {
  const declared = config.riskProfiles[name] ?? {};
  return {
    delegation_mode: declared.delegation_policy
      ? { value: declared.delegation_policy.value.mode, source: declared.delegation_policy.source }
      : { value: "forbidden", source: "default" },
    max_tasks_per_hour: declared.max_tasks_per_hour ?? config.policy.max_tasks_per_hour,
    max_cost_per_day: declared.max_cost_per_day ?? config.policy.max_cost_per_day,
    max_actions_per_hour: declared.max_actions_per_hour ?? config.policy.max_actions_per_hour,
    allowed_tools:
      declared.allowed_tools && declared.allowed_tools.value.length > 0
        ? declared.allowed_tools
        : { value: null, source: declared.allowed_tools?.source ?? "default" },
    excluded_tools: declared.excluded_tools ?? { value: [], source: "default" },
    always_ask: declared.always_ask
      ? {
          value: declared.always_ask.value.map((entry) => entry.trim()).filter((entry) => entry !== ""),
          source: declared.always_ask.source,
        }
      : { value: [], source: "default" },
  };
}
