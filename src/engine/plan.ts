import { readFile } from "node:fs/promises";
import { isAbsolute, join, relative } from "node:path";
import { z } from "zod";
import type { AgentAdapter } from "../agents/adapter.js";
import { findAdapter } from "../agents/registry.js";
import { type EffectiveConfig, loadConfig } from "../config/effective.js";
import type { RoleConfig } from "../config/schema.js";
import { resolveNetwork } from "../policy/network.js";
import { FindingSchema } from "../protocol/report.js";
import { ModeSchema } from "../protocol/task.js";
import { parseDuration } from "../support/duration.js";
import { CaesarError, UsageError } from "../support/errors.js";
import { describeRepository } from "../workspace/git.js";
import { checkProjectRelativePath } from "../workspace/materialise.js";
import type { DelegationRequest } from "./request.js";

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
  findings: z.array(FindingSchema),
  timeout_ms: z.number().int().positive(),
  stall_ms: z.number().int().positive(),
  model: z.string().nullable(),
  extra_args: z.array(z.string()),
  channel: z.boolean(),
  parent_id: z.string().nullable(),
  depth: z.number().int().nonnegative(),
  /** The git work tree top level, when the project is in git. */
  repo_top: z.string().nullable(),
  /** Where, relative to the work tree's top, the project root is (usually ""). */
  repo_prefix: z.string(),
  worktree: z.object({ copy: z.array(z.string()), link: z.array(z.string()), setup: z.array(z.string()) }),
  system_prompt: z.string().nullable(),
  requested_by: z.string(),
});
export type TaskPlan = z.infer<typeof TaskPlanSchema>;

export interface PlanContext {
  root: string;
  config?: EffectiveConfig;
  env?: NodeJS.ProcessEnv;
}

/**
 * Resolve a delegation request against the configuration into a plan — or refuse, before any task
 * directory or worktree exists, naming the setting that lifts the refusal.
 */
export async function resolvePlan(
  request: DelegationRequest,
  context: PlanContext,
): Promise<{ plan: TaskPlan; adapter: AgentAdapter }> {
  const { root } = context;
  const config = context.config ?? (await loadConfig(root, context.env));
  const objective = request.objective.trim();
  if (objective === "") {
    throw new UsageError("empty_objective", "The objective is empty.", {
      detail: 'Say what the agent should do: caesar run "Fix the parser on empty input".',
    });
  }
  const role = request.role ? findRole(config, request.role) : undefined;
  const agentId = request.agent ?? role?.agents?.[0];
  if (!agentId) {
    throw new UsageError("no_agent", "No agent selected.", {
      detail:
        "Pass --agent <id> (try --agent reference, the bundled agent), or --role <name> for a role that lists agents.",
    });
  }
  const adapter = findAdapter(config, root, agentId);
  checkAllowed(config, adapter.id);

  const mode = request.mode ?? role?.mode ?? config.policy.mode.value;
  const repo = await describeRepository(root);
  const isolationRequest = request.isolation ?? role?.isolation ?? config.policy.isolation.value;
  const isolation = resolveIsolation(isolationRequest, mode, repo.kind, config);

  const networkRequest = request.network ?? role?.network ?? config.policy.network.value;
  const { network, findings } = resolveNetwork(adapter.id, networkRequest, mode, adapter.capabilities);

  const timeoutMs =
    request.timeoutMs ?? parseDuration(role?.timeout ?? config.policy.timeout.value, "timeout");
  const stallMs = parseDuration(config.policy.stall_notice.value, "[policy] stall_notice");
  const model = request.model ?? role?.model ?? config.models[adapter.id]?.value ?? null;

  const worktree = {
    copy: config.worktree.copy.value.map((path) => checkProjectRelativePath(path, "copy")),
    link: config.worktree.link.value.map((path) => checkProjectRelativePath(path, "link")),
    setup: config.worktree.setup.value,
  };
  const parent = request.parent;
  const top = repo.kind === "none" ? null : repo.top;
  return {
    adapter,
    plan: {
      root,
      objective,
      context: request.context ?? "",
      constraints: request.constraints ?? [],
      acceptance: request.acceptance ?? [],
      agent: adapter.id,
      role: role?.name ?? null,
      mode,
      isolation,
      network,
      findings,
      timeout_ms: timeoutMs,
      stall_ms: stallMs,
      model,
      extra_args: request.extraArgs ?? [],
      channel: request.channel ?? false,
      parent_id: parent?.taskId ?? null,
      depth: parent ? parent.depth + 1 : 0,
      repo_top: top,
      repo_prefix: top ? relative(top, root) : "",
      worktree,
      system_prompt: role?.system_prompt_file ? await readRolePrompt(root, role) : null,
      requested_by: request.requestedBy ?? (parent ? parent.taskId : "cli"),
    },
  };
}

function findRole(config: EffectiveConfig, name: string): RoleConfig {
  const role = config.roles[name]?.value;
  if (role) return role;
  const known = Object.keys(config.roles);
  throw new UsageError("unknown_role", `Unknown role "${name}".`, {
    detail:
      known.length > 0
        ? `Known roles: ${known.join(", ")}.`
        : "No roles are configured: add [[role]] entries to .caesar/config.toml.",
  });
}

async function readRolePrompt(root: string, role: RoleConfig): Promise<string> {
  const file = role.system_prompt_file!;
  const path = isAbsolute(file) ? file : join(root, file);
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    throw new UsageError(
      "role_prompt_missing",
      `Role "${role.name}": cannot read system_prompt_file ${path}.`,
      {
        detail: `${(error as Error).message}. Fix the path in its [[role]] entry, or remove system_prompt_file.`,
      },
    );
  }
}

function checkAllowed(config: EffectiveConfig, agentId: string): void {
  const { denied, allowed } = config.policy;
  if (denied.value.includes(agentId)) {
    throw new CaesarError(
      "agent_denied",
      `Agent "${agentId}" is denied by [policy] denied (${denied.source} configuration).`,
      {
        detail: `Allow it with \`caesar policy allow ${agentId}\`, or remove it from [policy] denied.`,
      },
    );
  }
  if (allowed.value.length > 0 && !allowed.value.includes(agentId) && agentId !== "reference") {
    throw new CaesarError(
      "agent_not_allowed",
      `Agent "${agentId}" is not in [policy] allowed (${allowed.source} configuration).`,
      {
        detail: `Allow it with \`caesar policy allow ${agentId}\`, or add it to [policy] allowed.`,
      },
    );
  }
}

function resolveIsolation(
  requested: "auto" | "inplace" | "worktree",
  mode: "read-only" | "write",
  repo: "none" | "empty" | "usable",
  config: EffectiveConfig,
): "inplace" | "worktree" {
  if (repo !== "usable") {
    if (requested === "worktree") {
      throw new UsageError(
        "worktree_unavailable",
        repo === "none"
          ? "Worktree isolation needs a git repository."
          : "Worktree isolation needs a repository with at least one commit.",
        {
          detail:
            repo === "none"
              ? "Run caesar inside a git repository (git init && git commit), or use --isolation inplace."
              : "Make a first commit (git commit --allow-empty -m init), or use --isolation inplace.",
        },
      );
    }
    return "inplace"; // outside git, or without commits, inplace is the only mode and is allowed
  }
  const isolation = requested === "auto" ? (mode === "write" ? "worktree" : "inplace") : requested;
  if (isolation === "inplace" && mode === "write" && !config.policy.allow_inplace_write.value) {
    throw new CaesarError(
      "inplace_write_refused",
      "A write task in place, in a git repository, is refused by policy.",
      {
        detail:
          "It would edit your working tree directly. Use --isolation worktree (the default for writes), or set [policy] allow_inplace_write = true.",
      },
    );
  }
  return isolation;
}
