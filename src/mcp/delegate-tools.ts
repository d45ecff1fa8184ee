import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { admitAll } from "../engine/lifecycle/admit.js";
import { resolvePlan, type TaskPlan } from "../engine/lifecycle/plan.js";
import { parentFromEnv } from "../engine/lifecycle/request.js";
import { startTask } from "../engine/lifecycle/start.js";
import { CaesarError, messageOf } from "../support/errors.js";
import * as z from "../support/zod.js";
import type { OrchestratorContext } from "./context.js";
import { DelegationSchema, DelegationShape, toDelegationRequest } from "./delegation-args.js";
import { runTool, toolResult } from "./tool-result.js";

export const FANOUT_MAX_TASKS = 32;

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

/** caesar_delegate and caesar_fanout: start tasks, return their ids at once. */
export function registerDelegateTools(server: McpServer, context: OrchestratorContext): void {
  server.registerTool(
    "caesar_delegate",
    {
      title: "Delegate a task to a coding agent",
      description: [
        "Hand one coding task to another coding agent (codex, claude, opencode, gemini, copilot, or a configured one), which works on it in the background, by default in its own git worktree so your files stay untouched.",
        "Returns at once with a `task_id` (the task runs under its own process: ending this session does not stop it). Then call caesar_await with that id to get its report — changes verified against git — and caesar_diff / caesar_apply to review and take its work.",
        "Several independent tasks at once: caesar_fanout. The same task on several agents, to compare: caesar_race.",
        "Refused before anything starts when the policy forbids it (unknown or denied agent, in-place write in a repository, delegation too deep…): the error says which setting lifts it.",
      ].join(" "),
      inputSchema: DelegationShape,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    async (args) =>
      runTool(async () => {
        const { plan } = await resolvePlan(toDelegationRequest(args, parentFromEnv(context.env)), {
          root: context.root,
          env: context.env,
        });
        const record = await startTask(plan);
        return toolResult(
          describeStarted(record.id, record.dir, plan),
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
      ].join(" "),
      inputSchema: {
        tasks: z
          .array(DelegationSchema)
          .min(1, "tasks must contain at least one task.")
          .max(FANOUT_MAX_TASKS, `tasks must contain no more than ${FANOUT_MAX_TASKS} tasks.`)
          .describe("The tasks, each shaped like caesar_delegate's arguments."),
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    async (args) =>
      runTool(async () => {
        const parent = parentFromEnv(context.env);
        const plans = await admitAll(
          args.tasks.map((task) => ({
            objective: task.objective,
            build: () => toDelegationRequest(task, parent),
          })),
          context,
        );
        const started: ReturnType<typeof describeStarted>[] = [];
        for (const { plan } of plans) {
          try {
            const record = await startTask(plan);
            started.push(describeStarted(record.id, record.dir, plan));
          } catch (error) {
            throw new CaesarError(
              "fanout_start_failed",
              `Starting task ${started.length + 1} failed: ${messageOf(error)}`,
              {
                detail: `Already started (still running): ${started.map((task) => task.task_id).join(", ") || "none"}.`,
                cause: error,
              },
            );
          }
        }
        const ids = started.map((task) => task.task_id);
        return toolResult(
          { started: ids, tasks: started },
          `Started ${ids.length} task(s). Wait for them with caesar_await {"task_ids": ${JSON.stringify(ids)}}.`,
        );
      }),
  );
}
