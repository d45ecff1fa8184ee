import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { startPlannedTask, startPlannedTasks } from "../cluster/start.js";
import { renderParallel } from "../engine/follow/delegation-output.js";
import { admitAll } from "../engine/lifecycle/admit.js";
import { type Caller, governed } from "../engine/lifecycle/caller.js";
import { describeRequest, resolvePlan, type TaskPlan } from "../engine/lifecycle/plan.js";
import { CallerRequestSchema, type DelegationRequest, wireSpelling } from "../engine/lifecycle/request.js";
import type { TaskRecord } from "../engine/store/task-store.js";
import * as z from "../support/zod.js";
import { callerOf, type OrchestratorContext } from "./context.js";
import { awaitDelegated } from "./delegate-result.js";
import {
  DelegateToolSchema,
  DelegationArgumentsSchema,
  parsedByHandler,
  parseToolArguments,
  splitWait,
  toDelegationRequest,
  WaitShape,
} from "./delegation-args.js";
import { rosterDescription } from "./roster.js";
import { runTool, toolResult } from "./tool-result.js";

export const FANOUT_MAX_TASKS = 32;

const fanoutTasks = <T extends z.ZodType>(task: T) =>
  z
    .array(task)
    .min(1, "tasks must contain at least one task.")
    .max(FANOUT_MAX_TASKS, `tasks must contain no more than ${FANOUT_MAX_TASKS} tasks.`)
    .describe("The tasks, each shaped like caesar_delegate's arguments.");

/**
 * caesar_delegate's and caesar_fanout's arguments as published to this server's caller: the request's
 * fields, `agent` described with the agents that caller reaches (the delegation reference's roster).
 * Each task of a fan-out is then parsed as caesar_delegate's arguments are.
 */
function publishedSchemas(roster: readonly string[]) {
  const agent = { agent: CallerRequestSchema.shape.agent.describe(rosterDescription(roster)) };
  return {
    delegate: DelegateToolSchema.extend(agent),
    fanout: z.strictObject({ tasks: fanoutTasks(DelegationArgumentsSchema.extend(agent)), ...WaitShape }),
  };
}
const FanoutListSchema = z.strictObject({ tasks: fanoutTasks(z.unknown()), ...WaitShape });

/** What a started task looks like to the caller. */
export function describeStarted(id: string, dir: string, plan: TaskPlan) {
  return {
    task_id: id,
    agent: plan.agent,
    role: plan.role,
    mode: plan.mode,
    isolation: plan.isolation,
    network: plan.network,
    channel: plan.channel,
    timeout_ms: plan.timeout_ms,
    depth: plan.depth,
    checks: plan.checks.map((check) => check.command),
    attempts: plan.attempts,
    findings: plan.findings,
    dir,
  };
}

/**
 * caesar_delegate and caesar_fanout: start tasks and return their ids at once, or with `wait` (the
 * delegation reference's synchronous form) return each one's result once it has finished.
 */
export function registerDelegateTools(
  server: McpServer,
  context: OrchestratorContext,
  /** The agents this server's caller reaches, established at start-up (roster.ts). */
  roster: readonly string[],
): void {
  const published = publishedSchemas(roster);
  server.registerTool(
    "caesar_delegate",
    {
      title: "Delegate a task to a coding agent",
      description: [
        "Hand one coding task to another coding agent (codex, claude, opencode, gemini, copilot, or a configured one), which works on it in the background, by default in its own git worktree so your files stay untouched.",
        "Returns at once with a `task_id` (the task runs under its own process: ending this session does not stop it). Then call caesar_await with that id to get its report — changes verified against git — and caesar_diff / caesar_apply to review and take its work.",
        "With `wait: true` the call instead blocks until the task has finished and returns its result: `[Agent '<agent>' (<agent>/<model>)]` then the agent's answer and where its changes are, or `Agent '<agent>' failed: …` / `Agent '<agent>' timed out after <N>s` as an error.",
        "Pick the agent with caesar_list_agents, or a role with caesar_list_roles. With `channel: true` the agent can ask you questions: answer them with caesar_answer.",
        "Several independent tasks at once: caesar_fanout. The same task on several agents, to compare: caesar_race.",
        "Refused before anything starts when the policy forbids it (unknown or denied agent, in-place write in a repository, delegation too deep…): the error says which setting lifts it.",
      ].join(" "),
      inputSchema: parsedByHandler(published.delegate),
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    async (args, extra) =>
      runTool(async () => {
        const { wait, rest } = splitWait(args);
        const request = toDelegationRequest(rest, wireSpelling, DelegateToolSchema);
        const action = `caesar_delegate: ${describeRequest(request)}`;
        const caller = await callerOf(context, action);
        const { plan, record } = await governed(caller, action, async () => {
          const { plan } = await resolvePlan(request, { root: context.root, env: context.env, caller });
          return { plan, record: await startPlannedTask(plan) };
        });
        const started = describeStarted(record.id, record.dir, plan);
        if (wait) {
          const [waited] = await awaitDelegated(context, extra, [{ id: record.id, plan }]);
          const { outcome, view } = waited!;
          const answer = toolResult(
            { ...started, outcome, result: view },
            (outcome.output ?? outcome.error)!,
          );
          return outcome.success ? answer : { ...answer, isError: true };
        }
        return toolResult(
          started,
          `Started ${record.id} (${plan.agent}, ${plan.mode}, ${plan.isolation}). Wait for it with caesar_await {"task_ids": ["${record.id}"]}.`,
        );
      }),
  );

  server.registerTool(
    "caesar_fanout",
    {
      title: "Delegate several tasks at once",
      description: [
        `Start several independent tasks in one call (1 to ${FANOUT_MAX_TASKS}), each with its own objective and agent or role — e.g. one per module to migrate.`,
        "Admission is all or none: every task is checked against the policy before any starts; if one is refused, nothing is started and the error names which one and why.",
        "Returns the started tasks' ids at once, in order; then caesar_await them together.",
        "With `wait: true` the call blocks until every task has finished and returns `[Parallel delegation: <N> agents]` then one block per task, in order: `--- <agent> (success=true) ---` and its result, or `--- <agent> (success=false) ---` and `Error: …` (an error result when any failed).",
      ].join(" "),
      inputSchema: parsedByHandler(published.fanout),
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    async (args, extra) =>
      runTool(async () => {
        // Every task is parsed before any is admitted: a bad one is refused as such, naming its place.
        const parsed = parseToolArguments(FanoutListSchema, args);
        const requests = parsed.tasks.map((task, index) =>
          toDelegationRequest(task, (path) => wireSpelling(["tasks", index, ...path])),
        );
        const { started, plans } = await startAllOrNone(
          requests.map((request) => ({ objective: request.objective, build: () => request })),
          context,
          `caesar_fanout of ${requests.length} task(s)`,
        );
        const tasks = started.map((record, index) => describeStarted(record.id, record.dir, plans[index]!));
        const ids = tasks.map((task) => task.task_id);
        if (parsed.wait) {
          const waited = await awaitDelegated(
            context,
            extra,
            started.map((record, index) => ({ id: record.id, plan: plans[index]! })),
          );
          const outcomes = waited.map((task) => task.outcome);
          const failed = outcomes.some((outcome) => !outcome.success);
          const text = `${renderParallel(outcomes)}${failed ? "\n\nOne or more parallel agents failed" : ""}`;
          const answer = toolResult(
            { started: ids, tasks, outcomes, results: waited.map((task) => task.view) },
            text,
          );
          return failed ? { ...answer, isError: true } : answer;
        }
        return toolResult(
          { started: ids, tasks },
          `Started ${ids.length} task(s). Wait for them with caesar_await {"task_ids": ${JSON.stringify(ids)}}.`,
        );
      }),
  );
}

/**
 * Start several tasks all or none — caesar_fanout's and caesar_race's admission: who asks is established
 * once, every request is resolved into a plan (a refusal names each refused task and starts nothing),
 * then every budget place is reserved and every task created before any conductor starts
 * (`startTasks`). Returns the started tasks in request order.
 */
export async function startAllOrNone(
  requests: { objective: string; build: () => DelegationRequest }[],
  context: OrchestratorContext,
  action: string,
): Promise<{ started: TaskRecord[]; plans: TaskPlan[]; caller: Caller }> {
  const caller = await callerOf(context, action);
  return governed(caller, action, async () => {
    const plans = (await admitAll(requests, context, caller)).map((admitted) => admitted.plan);
    return { started: await startPlannedTasks(plans), plans, caller };
  });
}
