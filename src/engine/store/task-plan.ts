import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { FollowUpSchema } from "../../protocol/choices.js";
import { McpServerSchema } from "../../protocol/mcp-server.js";
import { PromptImageSchema } from "../../protocol/prompt-image.js";
import { FindingSchema } from "../../protocol/report.js";
import { ModeSchema } from "../../protocol/task.js";
import { writeFileAtomic } from "../../support/atomic-file.js";
import { TelemetrySettingsSchema } from "../../support/telemetry/settings.js";
import { TraceContextSchema } from "../../support/telemetry/trace-context.js";
import * as z from "../../support/zod.js";
import { controlOfTaskDir, makePrivateControlDir } from "./control.js";
import { readTaskText, readTaskTextOrNothing } from "./task-files.js";

/** plan.json: what the conductor executes (caesar's copy in the control directory, a mirror in the task directory). */
export const PLAN_FILE = "plan.json";

/**
 * Where a task runs when it leaves this machine: the NATS servers (and the files holding the credentials
 * to reach them — paths only, never secrets), the git remote every machine reaches, and what happens when
 * a worker is lost. Resolved from `--on` or `[cluster]` (docs/cluster.md).
 */
/** `[cluster] retry`, resolved: a failure with one of `on` codes runs again, `attempts` in all. */
export const RetryPolicySchema = z.object({
  attempts: z.number().int().min(1).max(10),
  backoff_ms: z.number().int().positive(),
  on: z.array(z.string()),
});
export type RetryPolicy = z.infer<typeof RetryPolicySchema>;

/** The provider's transient failures, as the adapters classify them (src/agents/failure.ts). */
export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 3,
  backoff_ms: 10_000,
  on: ["rate_limited", "model_unreachable", "model_error"],
};

export const RemotePlanSchema = z.object({
  servers: z.array(z.string().min(1)).min(1),
  credentials: z.string().nullable().default(null),
  nkey: z.string().nullable().default(null),
  token_file: z.string().nullable().default(null),
  user: z.string().nullable().default(null),
  password_file: z.string().nullable().default(null),
  tls_ca: z.string().nullable().default(null),
  tls_cert: z.string().nullable().default(null),
  tls_key: z.string().nullable().default(null),
  git_remote: z.string().min(1),
  queue: z.string().nullable().default(null),
  on_worker_loss: z.enum(["retry", "fail"]).default("retry"),
  max_attempts: z.number().int().positive().default(3),
  /** Transient failures run again: attempts in all, the first wait (doubled each time), the codes (docs/cluster.md). */
  retry: RetryPolicySchema.default(DEFAULT_RETRY),
  heartbeat_ms: z.number().int().positive().default(30_000),
  replicas: z.number().int().positive().default(1),
});
export type RemotePlan = z.infer<typeof RemotePlanSchema>;

/** A check: a command caesar runs in the workspace after the agent, and who asked for it. */
export const PlannedCheckSchema = z.object({
  command: z.string().min(1),
  /** request (the person or program that delegated), acceptance (a `run:` criterion), role:<name>, config. */
  from: z.string(),
});
export type PlannedCheck = z.infer<typeof PlannedCheckSchema>;

/** An acceptance criterion written `run: <command>` is a check; the others stay text for the agent. */
const RUN_CRITERION = /^\s*run:\s*/i;

/** The command of a `run: <command>` criterion, or undefined for a criterion that is text. */
export function runCriterionCommand(criterion: string): string | undefined {
  return RUN_CRITERION.test(criterion) ? criterion.replace(RUN_CRITERION, "") : undefined;
}

/** The criteria that stay text for the agent (the `run:` ones are checks). */
export function textCriteria(acceptance: readonly string[]): string[] {
  return acceptance.filter((criterion) => runCriterionCommand(criterion) === undefined);
}

/** How a race is won: by the first contender whose checks all pass, or by the best once all finished. */
export const RaceModeSchema = z.enum(["first", "best"]);
export type RaceMode = z.infer<typeof RaceModeSchema>;

/** A contender's plan names its race: how its conductor knows to settle it. */
export const RaceRefSchema = z.object({ id: z.string(), mode: RaceModeSchema });
export type RaceRef = z.infer<typeof RaceRefSchema>;

/** Everything decided before a task exists; written to plan.json for the conductor. */
export const TaskPlanSchema = z.object({
  root: z.string(),
  objective: z.string(),
  context: z.string(),
  constraints: z.array(z.string()),
  acceptance: z.array(z.string()),
  agent: z.string(),
  role: z.string().nullable(),
  mode: ModeSchema,
  isolation: z.enum(["inplace", "worktree"]),
  network: z.boolean(),
  /**
   * The OS sandbox the agent runs in (null: none, `detail` says why), whether the task's network is cut
   * by it (no network namespace of the host) rather than by the agent's own CLI, and the hosts it reaches
   * through caesar's egress proxy (its model's, and `[sandbox] allow_hosts` when the task has the network).
   * `egress` null: a plan of a caesar without the proxy (the sandbox either cuts everything or nothing).
   */
  sandbox: z
    .object({
      backend: z.enum(["bwrap"]).nullable(),
      detail: z.string(),
      cuts_network: z.boolean(),
      egress: z.array(z.string()).nullable().default(null),
      /** Its agent's provider keys are masked (`[sandbox] mask_keys`; false in a plan of an older caesar). */
      mask_keys: z.boolean().default(false),
    })
    .default({
      backend: null,
      detail: "planned by an older caesar",
      cuts_network: false,
      egress: null,
      mask_keys: false,
    }),
  findings: z.array(FindingSchema),
  /** Tool restrictions for the agent, in its CLI's own names. */
  tools: z
    .object({ allowed: z.array(z.string()).nullable(), excluded: z.array(z.string()) })
    .default({ allowed: null, excluded: [] }),
  timeout_ms: z.number().int().positive(),
  stall_ms: z.number().int().positive(),
  model: z.string().nullable(),
  extra_args: z.array(z.string()),
  channel: z.boolean(),
  /** An ACP agent's permission requests that the policy allows are asked of a person (`caesar acp`). */
  ask_permissions: z.boolean().default(false),
  /**
   * MCP servers handed to the agent beside the return channel (the editor's, `caesar acp`): only to an
   * agent that takes them, in write mode (a read-only task never gets tools it did not have).
   */
  mcp_servers: z.array(McpServerSchema).default([]),
  /** Images that go with the brief (an editor's prompt), for an agent that takes them. */
  images: z.array(PromptImageSchema).default([]),
  parent_id: z.string().nullable(),
  depth: z.number().int().nonnegative(),
  /** root: started by a person or a program; spawn: an agent re-running itself; delegate: another agent. */
  kind: z.enum(["root", "spawn", "delegate"]).default("root"),
  /** bounded children never exceed their parent and share its budget. */
  bounded: z.boolean().default(false),
  /** The delegation tree whose budget this task draws from (null: a tree of its own). */
  budget: z.object({
    tree: z.string().nullable(),
    max_tasks_per_hour: z.number().nullable(),
    max_cost_per_day: z.number().nullable(),
    /** Tool calls per hour for the whole tree (null: unlimited, as in plans made before it was counted). */
    max_actions_per_hour: z.number().nullable().default(null),
  }),
  /** The git work tree the task branches from (the project's, or its parent's worktree). */
  repo_top: z.string().nullable(),
  /** Where, relative to that work tree's top, the workspace is (usually ""). */
  repo_prefix: z.string(),
  worktree: z.object({ copy: z.array(z.string()), link: z.array(z.string()), setup: z.array(z.string()) }),
  system_prompt: z.string().nullable(),
  requested_by: z.string(),
  /** Checks run after the agent exits (docs/checks.md); each has its own deadline. */
  checks: z.array(PlannedCheckSchema).default([]),
  check_timeout_ms: z.number().int().positive().default(600_000),
  /** Runs of the agent allowed when checks fail (1: no second attempt). */
  attempts: z.number().int().positive().default(1),
  /** How a second attempt reaches the agent: its own session continued (where its CLI can), or a new run. */
  follow_up: FollowUpSchema.default("resume"),
  /** The race this task is a contender of (caesar_race, `caesar race`), settled by its conductor. */
  race: RaceRefSchema.nullable().default(null),
  /**
   * The global configuration file (`~/.config/caesar/config.toml`) the tree's root was planned with. A
   * nested request reads this one, whatever XDG_CONFIG_HOME or HOME its agent sets.
   */
  global_config: z.string().nullable().default(null),
  /** The commit a worktree starts from (null: the work tree's HEAD when the task is isolated). */
  base_commit: z.string().nullable().default(null),
  /** Set when the task runs on a pool of workers instead of this machine. */
  remote: RemotePlanSchema.nullable().default(null),
  /** The task's span in its trace: under its parent task's, across processes and machines (null: an older caesar). */
  trace: TraceContextSchema.nullable().default(null),
  /** Where its spans go (null: telemetry off); a child inherits its parent's (docs/observability.md). */
  telemetry: TelemetrySettingsSchema.nullable().default(null),
});
export type TaskPlan = z.infer<typeof TaskPlanSchema>;

/**
 * Write a new task's plan: the authoritative copy in the control directory (what the conductor executes
 * and governance reads), then the mirror in the task directory (for people and tools to read).
 */
export async function writePlan(dir: string, plan: TaskPlan): Promise<void> {
  const text = `${JSON.stringify(plan, null, 2)}\n`;
  const control = controlOfTaskDir(dir);
  if (control) {
    await makePrivateControlDir(control.dir);
    await writeFileAtomic(control.plan, text);
    await writeFileAtomic(join(dir, PLAN_FILE), text, { sync: false });
    return;
  }
  await writeFileAtomic(join(dir, PLAN_FILE), text);
}

/**
 * The plan a task was started with — caesar's own copy when the task has one (a rewritten mirror changes
 * nothing) — throws when it is missing or invalid.
 */
export async function loadPlan(dir: string): Promise<TaskPlan> {
  return TaskPlanSchema.parse(JSON.parse(await readPlanText(dir)));
}

async function readPlanText(dir: string): Promise<string> {
  const control = controlOfTaskDir(dir);
  if (control && existsSync(control.state)) return readFile(control.plan, "utf8");
  const text = await readTaskText(join(dir, PLAN_FILE));
  if (text === undefined) throw new Error(`${join(dir, PLAN_FILE)} does not exist`);
  return text;
}

/** The plan a task was started with, or undefined when it cannot be read. */
export async function readPlan(dir: string): Promise<TaskPlan | undefined> {
  try {
    return await loadPlan(dir);
  } catch {
    return undefined;
  }
}

/** Is the plan mirror in the task directory still what caesar wrote? (false: someone rewrote it) */
export async function isPlanMirrorIntact(dir: string): Promise<boolean> {
  const control = controlOfTaskDir(dir);
  if (!control) return true;
  const [record, mirror] = await Promise.all([
    readFile(control.plan, "utf8").catch(() => undefined),
    readTaskTextOrNothing(join(dir, PLAN_FILE)),
  ]);
  return record === undefined || mirror === record;
}

/** Put the mirror back as caesar wrote it. */
export async function restorePlanMirror(dir: string): Promise<void> {
  const control = controlOfTaskDir(dir);
  if (!control) return;
  const record = await readFile(control.plan, "utf8").catch(() => undefined);
  if (record !== undefined)
    await writeFileAtomic(join(dir, PLAN_FILE), record, { sync: false }).catch(() => undefined);
}
