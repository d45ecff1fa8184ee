import {
  FollowUpSchema,
  IsolationRequestSchema,
  ModeSchema,
  TriStateNetworkSchema,
} from "../protocol/choices.js";
import { parseHostRule } from "../support/host-rules.js";
import * as z from "../support/zod.js";

/**
 * The configuration files (`.caesar/config.toml` and its layers). Every table is strict: an unknown key
 * is an error naming the file, the key and the closest valid key.
 */

const durationText = z.string().min(1).describe("A duration with a unit: 90s, 10m, 1h30m.");

export {
  type FollowUp,
  FollowUpSchema,
  type IsolationRequest,
  IsolationRequestSchema,
  type NetworkRequest,
  TriStateNetworkSchema,
} from "../protocol/choices.js";

export const PolicySchema = z.strictObject({
  allowed: z
    .array(z.string())
    .optional()
    .describe("Agents that may run (empty or absent: all that are not denied)."),
  denied: z.array(z.string()).optional().describe("Agents that may never run."),
  max_parallel: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("Running tasks across all processes (default 4)."),
  mode: ModeSchema.optional(),
  isolation: IsolationRequestSchema.optional(),
  network: TriStateNetworkSchema.optional(),
  timeout: durationText.optional(),
  allow_inplace_write: z.boolean().optional(),
  allow_recursion: z.boolean().optional(),
  max_depth: z
    .number()
    .int()
    .min(1, {
      error:
        "max_depth counts hops from the main agent (depth 0): 1 lets it delegate and its tasks not, and 0 would forbid every task. A value written for caesar before it counted so needs one more (0 → 1)",
    })
    .optional()
    .describe(
      "Hops of delegation from the main agent (depth 0): 1 lets the main agent delegate and its tasks not (default 3).",
    ),
  stall_notice: durationText
    .optional()
    .describe("Say so when an agent prints nothing for this long (default 2m)."),
  max_tasks_per_hour: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe("Tasks a delegation tree may start per hour (0: none)."),
  max_cost_per_day: z
    .number()
    .nonnegative()
    .optional()
    .describe("USD a delegation tree may spend per day (0: none)."),
  max_actions_per_hour: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe(
      "Tool calls a delegation tree's agents may make per hour, as their events show them (absent: unlimited; 0: none).",
    ),
});

export const WorktreeSchema = z.strictObject({
  copy: z.array(z.string()).optional().describe("Paths copied from the project into each new worktree."),
  link: z.array(z.string()).optional().describe("Paths symlinked into each worktree (shared, not isolated)."),
  setup: z.array(z.string()).optional().describe("Commands run in the worktree before the agent starts."),
});

/** `[sandbox]`: the OS sandbox every agent runs in (docs/threat-model.md). */
export const SandboxSchema = z.strictObject({
  mode: z
    .enum(["required", "auto", "off"])
    .optional()
    .describe(
      "required: refuse a task where no sandbox can run; auto (the default): sandbox where the platform can, else run unsandboxed with a high finding; off: never sandbox.",
    ),
  allow_hosts: z
    .array(
      z.string().refine((text) => typeof parseHostRule(text) !== "string", {
        error: (issue) => String(parseHostRule(String(issue.input))),
      }),
    )
    .optional()
    .describe(
      "What a sandboxed agent reaches through caesar's egress proxy when its task has the network, besides its model's hosts: `example.com`, `example.com:8443`, `*.example.com`, `*` (any public host). Replaces the default list of package registries.",
    ),
  mask_keys: z
    .boolean()
    .optional()
    .describe(
      "Mask a sandboxed agent's provider key (claude, gemini, copilot with its own provider): the agent gets a placeholder, and caesar puts the key back on each request to the provider. Default true.",
    ),
});

/**
 * `[cluster]`: where tasks go when they leave this machine (NATS JetStream for the queue, a git remote for
 * the code). Credentials are never written here as values: only the paths of files that hold them.
 */
export const ClusterSchema = z.strictObject({
  nats: z
    .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
    .optional()
    .describe(
      "NATS server URL(s), nats://host:4222 or tls://host:4222. When set, `caesar run` sends tasks there.",
    ),
  remote: z
    .string()
    .min(1)
    .optional()
    .describe("The git remote every machine reaches (a remote name or a URL; default origin)."),
  credentials: z.string().min(1).optional().describe("A NATS credentials file (.creds: JWT and nkey seed)."),
  nkey: z.string().min(1).optional().describe("A file holding an nkey seed (SU…)."),
  token_file: z.string().min(1).optional().describe("A file holding a NATS token."),
  user: z.string().min(1).optional().describe("A NATS user name (its password in password_file)."),
  password_file: z.string().min(1).optional().describe("A file holding the NATS user's password."),
  tls_ca: z.string().min(1).optional().describe("CA certificate file to verify the server with."),
  tls_cert: z.string().min(1).optional().describe("Client certificate file (mutual TLS)."),
  tls_key: z.string().min(1).optional().describe("Client key file (mutual TLS)."),
  on_worker_loss: z
    .enum(["retry", "fail"])
    .optional()
    .describe("A task whose worker was lost: run it again elsewhere, or finish it failed (default retry)."),
  max_attempts: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("Workers a task may lose before it is finished failed (default 3)."),
  heartbeat_timeout: durationText
    .optional()
    .describe("A worker silent this long loses its tasks (default 30s; the queue's ack wait)."),
  retry: z
    .strictObject({
      attempts: z
        .number()
        .int()
        .min(1)
        .max(10)
        .optional()
        .describe("Attempts in all for a task whose failure is transient (default 3; 1: never retried)."),
      backoff: durationText
        .optional()
        .describe(
          "Wait before the second attempt, doubled before each next one, at most 5 minutes (default 10s).",
        ),
      on: z
        .array(z.string().regex(/^[a-z][a-z0-9_]*$/, "an error code, e.g. rate_limited"))
        .optional()
        .describe(
          "The error codes that count as transient (default: rate_limited, model_unreachable, model_error); each must be a code of docs/errors.md.",
        ),
    })
    .optional()
    .describe(
      "Transient failures (the model provider's 5xx, rate limits, an unreachable provider): run the task again.",
    ),
  keep_results: durationText
    .optional()
    .describe(
      "How long result refs (refs/caesar/tasks/<id>) stay on the remote after their task ended, unless applied or pinned (default 30d).",
    ),
  replicas: z
    .number()
    .int()
    .min(1)
    .max(5)
    .optional()
    .describe("Copies of caesar's streams and buckets in a NATS cluster (default 1; 3 on a 3-node cluster)."),
  queue: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, "letters, digits, '-' and '_'")
    .optional()
    .describe("The queue's name (default: derived from the repository's first commit)."),
});

/**
 * `[telemetry]`: OpenTelemetry traces of every task (docs/observability.md). Off unless an endpoint is set
 * here or in OTEL_EXPORTER_OTLP_ENDPOINT; the standard OTEL_* variables win over these keys.
 */
export const TelemetrySchema = z.strictObject({
  enabled: z
    .boolean()
    .optional()
    .describe(
      "false: never send traces, whatever the OTEL_* variables say (default: on when an endpoint is set).",
    ),
  endpoint: z
    .string()
    .url()
    .optional()
    .describe(
      "The OTLP/HTTP collector's base URL (spans go to <endpoint>/v1/traces), as OTEL_EXPORTER_OTLP_ENDPOINT.",
    ),
  protocol: z
    .enum(["http/protobuf", "http/json"])
    .optional()
    .describe("OTLP encoding (default http/protobuf), as OTEL_EXPORTER_OTLP_PROTOCOL."),
  service_name: z.string().min(1).optional().describe("service.name of the spans (default caesar)."),
  resource_attributes: z
    .record(z.string(), z.string())
    .optional()
    .describe("More resource attributes, as OTEL_RESOURCE_ATTRIBUTES (which wins key by key)."),
});

/** A check: a shell command whose exit code 0 says the agent's work holds (docs/checks.md). */
const checkCommand = z.string().describe("A command run with `sh -c` in the task's workspace.");

export const ChecksSchema = z.strictObject({
  default: z
    .array(checkCommand)
    .optional()
    .describe("Checks every task runs after its agent, unless its role lists its own."),
  timeout: durationText.optional().describe("Each check's deadline (default 10m), never past the task's."),
  attempts: z
    .number()
    .int()
    .min(1)
    .max(10)
    .optional()
    .describe("How many times the agent may try when checks fail (default 1: no second attempt)."),
  follow_up: FollowUpSchema.optional().describe(
    "resume (default): continue the agent's own session where its CLI can; fresh: a new run whose brief carries the diff and the failures.",
  ),
});

export const CustomAgentSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, "lower-case letters, digits, '-' and '_'"),
  bin: z.string().min(1),
  /**
   * How caesar talks with it: `oacp` (its files and its output; the default) or `acp` (the Agent Client
   * Protocol over stdin/stdout).
   */
  protocol: z.enum(["oacp", "acp"]).default("oacp"),
  /** Default: ["{{prompt}}"] for an OACP agent, none for an ACP agent (the brief goes in session/prompt). */
  args: z.array(z.string()).optional(),
  cwd_mode: z.enum(["process", "flag"]).default("process"),
  display_name: z.string().optional(),
  env: z.record(z.string(), z.string()).optional(),
  enabled: z.boolean().optional(),
});
export type CustomAgentConfig = z.infer<typeof CustomAgentSchema>;

export const RoleSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, "lower-case letters, digits, '-' and '_'"),
  purpose: z.string().optional(),
  agents: z.array(z.string()).optional(),
  mode: ModeSchema.optional(),
  isolation: IsolationRequestSchema.optional(),
  network: TriStateNetworkSchema.optional(),
  timeout: durationText.optional(),
  model: z.string().optional(),
  system_prompt_file: z.string().optional(),
  checks: z
    .array(checkCommand)
    .optional()
    .describe("Checks for this role's tasks, instead of [checks] default."),
});
export type RoleConfig = z.infer<typeof RoleSchema>;

export const DelegateTargetSchema = z.union([
  z.string().min(1),
  z.strictObject({ agent: z.string().min(1), mode: z.enum(["bounded", "independent"]).default("bounded") }),
]);
export type DelegateTargetInput = z.infer<typeof DelegateTargetSchema>;

/** Settings of any agent, built-in or custom: `[agents.<id>]`. */
export const AgentSettingsSchema = z.strictObject({
  enabled: z.boolean().optional(),
  risk_profile: z.string().min(1).optional(),
  delegate_same_risk_profile: z.boolean().optional(),
  delegates: z.array(DelegateTargetSchema).optional(),
  /** Tools the agent may use, in its CLI's own names (absent: no allow-list). */
  allowed_tools: z.array(z.string().min(1)).optional(),
  /** Tools removed from the agent, in its CLI's own names. */
  excluded_tools: z.array(z.string().min(1)).optional(),
  /**
   * A task's time on this agent when neither the request nor its role says (the delegation reference's
   * per-target `delegation_timeout_secs`); else `[policy] timeout`.
   */
  timeout: durationText.optional(),
});
export type AgentSettings = z.infer<typeof AgentSettingsSchema>;

/** `[risk_profiles.<name>]`: what agents of that profile may do when they delegate. */
export const RiskProfileSchema = z.strictObject({
  delegation_policy: z.strictObject({ mode: z.enum(["forbidden", "allow"]) }).optional(),
  max_tasks_per_hour: z.number().int().nonnegative().optional(),
  max_cost_per_day: z.number().nonnegative().optional(),
  max_actions_per_hour: z.number().int().nonnegative().optional(),
  /**
   * Tools the profile's agents may use, in their CLIs' own names, as the delegation reference's risk
   * profiles set them: empty or absent, no restriction.
   */
  allowed_tools: z.array(z.string().min(1)).optional(),
  /** Tools removed from the profile's agents, in their CLIs' own names. */
  excluded_tools: z.array(z.string().min(1)).optional(),
  /**
   * Tools that always need a person's approval, as the delegation reference's risk profiles list them
   * (default none): an agent of this profile is refused as an independent delegate, which nobody could
   * ask (docs/configuration.md).
   */
  always_ask: z.array(z.string()).optional(),
});
export type RiskProfile = z.infer<typeof RiskProfileSchema>;

export const ConfigFileSchema = z.strictObject({
  policy: PolicySchema.optional(),
  worktree: WorktreeSchema.optional(),
  checks: ChecksSchema.optional(),
  models: z.record(z.string(), z.string()).optional(),
  agent: z.array(CustomAgentSchema).optional(),
  agents: z.record(z.string(), AgentSettingsSchema).optional(),
  risk_profiles: z.record(z.string(), RiskProfileSchema).optional(),
  role: z.array(RoleSchema).optional(),
  cluster: ClusterSchema.optional(),
  sandbox: SandboxSchema.optional(),
  telemetry: TelemetrySchema.optional(),
});
export type ConfigFile = z.infer<typeof ConfigFileSchema>;
