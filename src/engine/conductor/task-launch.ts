import { join } from "node:path";
import type { LaunchContext } from "../../agents/adapter.js";
import { ownKeyVariables } from "../../agents/model-hosts.js";
import type { Task } from "../../protocol/task.js";
import { CAESAR_ENV_NAMES, makeCaesarEnv, taskPaths } from "../../protocol/task-dir.js";
import { PROTOCOLS } from "../../protocol/versions.js";
import { otherProvidersVariables } from "../../support/provider-credentials.js";
import { formatTraceparent } from "../../support/telemetry/trace-context.js";
import { taskGitOf } from "../../workspace/task-objects.js";
import { projectPaths } from "../store/project.js";
import type { TaskState } from "../store/state.js";
import type { TaskPlan } from "../store/task-plan.js";
import { makeBrief } from "./brief.js";
import { TASK_TOKEN_ENV } from "./credentials.js";
import { returnChannelFor } from "./return-channel.js";

/** Where the agent works, as isolation made it (isolate.ts) or as caesar's record of the task says. */
export interface Workplace {
  workspace: string;
  baseRef: string | null;
}

/**
 * `task.json` as the agent reads it: from the plan and where the agent works — never from the task
 * directory's copy, which the agent can rewrite (a conductor taking the task over rebuilds it).
 */
export function makeTask(
  plan: TaskPlan,
  state: Pick<TaskState, "id" | "created_at">,
  dir: string,
  where: Workplace,
): Task {
  const paths = taskPaths(dir);
  return {
    protocol: PROTOCOLS.task,
    id: state.id,
    created_at: state.created_at,
    // OACP marks role optional (docs/protocol.md): absent, not null, reads the same under either reading.
    ...(plan.role ? { role: plan.role } : {}),
    agent: plan.agent,
    objective: plan.objective,
    context: plan.context,
    constraints: plan.constraints,
    acceptance_criteria: plan.acceptance,
    mode: plan.mode,
    isolation: plan.isolation,
    network: plan.network,
    workspace: where.workspace,
    base_ref: where.baseRef,
    deadline_ms: plan.timeout_ms,
    depth: plan.depth,
    report_path: paths.report,
    events_path: paths.events,
    channel: plan.channel ? returnChannelFor(dir).coordinates : null,
  };
}

/** The first run's launch: the brief, the modes, the return channel, the environment (without credentials). */
export function makeLaunch(
  plan: TaskPlan,
  task: Task,
  dir: string,
  env: Record<string, string>,
): LaunchContext {
  const paths = taskPaths(dir);
  return {
    task,
    paths,
    prompt: makeBrief(
      task,
      paths,
      plan.system_prompt,
      plan.checks.map((check) => check.command),
    ),
    mode: plan.mode,
    network: plan.network,
    ...(plan.model ? { model: plan.model } : {}),
    tools: plan.tools,
    extraArgs: plan.extra_args,
    ...(plan.channel ? { channel: returnChannelFor(dir) } : {}),
    ...(plan.mcp_servers.length > 0 ? { mcpServers: plan.mcp_servers } : {}),
    ...(plan.images.length > 0 ? { images: plan.images } : {}),
    extraDirs: [dir],
    runtimeDir: join(dir, "runtime"),
    ...(plan.sandbox.backend ? { sandboxed: true, ...sandboxGitDir(task) } : {}),
    env,
  };
}

/** A sandboxed worktree task's registration in git, where its commits go (workspace/task-objects.ts). */
function sandboxGitDir(task: Task): { gitDir?: string } {
  if (task.isolation !== "worktree") return {};
  try {
    const registration = taskGitOf(task.workspace)?.registration;
    return registration ? { gitDir: registration } : {};
  } catch {
    return {};
  }
}

/**
 * The agent's environment: the given one (the front end's that asked for the task), minus a parent task's
 * CAESAR_* variables (its credentials included), plus this task's. Its own credentials are added per run.
 */
export function agentEnvironment(
  base: NodeJS.ProcessEnv,
  plan: TaskPlan,
  task: Task,
  dir: string,
  product: string,
): Record<string, string> {
  const inherited = new Set<string>([...CAESAR_ENV_NAMES, "CAESAR_CHANNEL_TASK_DIR", TASK_TOKEN_ENV]);
  // A sandboxed agent gets its own model provider's credentials, not the others' (docs/threat-model.md).
  if (plan.sandbox.backend) {
    const own = ownKeyVariables(product, base);
    for (const name of otherProvidersVariables(product, base)) if (!own.includes(name)) inherited.add(name);
  }
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(base)) {
    if (value !== undefined && !inherited.has(key)) env[key] = value;
  }
  // An agent CLI that exports its own spans nests them under the task's (W3C trace context).
  if (plan.telemetry && plan.trace) {
    env.TRACEPARENT = formatTraceparent(plan.trace);
    delete env.TRACESTATE;
  }
  return {
    ...env,
    ...makeCaesarEnv({ dir, taskId: task.id, agent: plan.agent, depth: plan.depth }),
    AGENT_CHAT_ROOT: projectPaths(plan.root).chat,
  };
}
