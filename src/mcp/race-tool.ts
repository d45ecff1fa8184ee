import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { startGovernedRace } from "../cluster/start.js";
import { AwaitRequestSchema, awaitTasks } from "../engine/follow/await-tasks.js";
import { compareTasks } from "../engine/follow/compare-tasks.js";
import { CallerRequestSchema, DelegationFields } from "../engine/lifecycle/request.js";
import { assertMayRead } from "../engine/lifecycle/subtree-read.js";
import { lookAtRace, RACE_MAX_AGENTS } from "../engine/race/race.js";
import { readPlan } from "../engine/store/task-plan.js";
import { loadTask, type TaskRecord, taskDirOf } from "../engine/store/task-store.js";
import { UsageError } from "../support/errors.js";
import * as z from "../support/zod.js";
import { callerOf, type OrchestratorContext } from "./context.js";
import {
  parsedByHandler,
  parseToolArguments,
  RaceOptionsShape,
  toDelegationRequest,
} from "./delegation-args.js";
import { keepAlive } from "./progress.js";
import { runTool, toolResult } from "./tool-result.js";

/** caesar_race's arguments: to start a race (objective, agents, the request's options) or compare one. */
const RaceArgumentsSchema = z.strictObject({
  objective: CallerRequestSchema.shape.objective
    .optional()
    .describe("What every agent should do (to start a race)."),
  agents: z
    .array(DelegationFields.agent.unwrap())
    .min(2, "agents must name at least two agents.")
    .max(RACE_MAX_AGENTS, `agents must name no more than ${RACE_MAX_AGENTS} agents.`)
    .optional()
    .describe('The contenders (to start a race), e.g. ["codex", "claude"].'),
  ...RaceOptionsShape,
  best: z
    .boolean()
    .optional()
    .describe(
      "Let every contender finish and rank them (checks passed, then the smaller diff, then time) instead of taking the first whose checks all pass.",
    ),
  task_ids: AwaitRequestSchema.shape.task_ids
    .optional()
    .describe("Instead of starting a race: the task ids of an earlier one, to compare them again."),
  timeout_ms: AwaitRequestSchema.shape.timeout_ms,
});

/** caesar_race: one objective on several agents, each in its own worktree, compared side by side. */
export function registerRaceTool(server: McpServer, context: OrchestratorContext): void {
  server.registerTool(
    "caesar_race",
    {
      title: "Race several agents on one task",
      description: [
        `Give the same objective to several agents (2 to ${RACE_MAX_AGENTS}; the same agent may appear twice), each in its own git worktree, then compare their results side by side: status, checks passed, acceptance criteria, diff size (files, lines), duration and token usage.`,
        "With `checks` (commands caesar runs in each worktree after its agent), the race is won on evidence: the winner is the first contender whose checks all pass, and the others are cancelled (their worktrees and diffs are kept); with `best: true`, all finish and the winner ranks first by checks passed, then the smaller diff, then time. `decision` says who won and why.",
        "Waits up to `timeout_ms` (default 30000, at most 120000) for them. If some are still running, the comparison shows them as running: call caesar_race again with `task_ids` (the ids it returned) to compare again, without starting anything.",
        "Then caesar_diff and caesar_apply the winner. Needs a git repository with at least one commit.",
      ].join(" "),
      inputSchema: parsedByHandler(RaceArgumentsSchema),
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: true,
      },
    },
    async (raw, extra) =>
      runTool(async () => {
        const args = parseToolArguments(RaceArgumentsSchema, raw);
        let ids: string[];
        let objective: string | undefined = args.objective;
        if (args.task_ids) {
          if (args.objective || args.agents) {
            throw new UsageError(
              "race_arguments",
              "Give either task_ids (compare again) or objective and agents (start a race), not both.",
            );
          }
          const caller = await callerOf(context, `caesar_race compare ${args.task_ids.join(" ")}`);
          for (const id of args.task_ids)
            await assertMayRead(context.root, id, "caesar_race compare", { caller });
          ids = args.task_ids;
        } else {
          if (!args.objective || !args.agents) {
            throw new UsageError("race_arguments", "A race needs an objective and at least two agents.", {
              detail:
                'Call caesar_race {"objective": "...", "agents": ["codex", "claude"]}, or pass task_ids to compare an earlier race.',
            });
          }
          const action = `caesar_race of ${args.agents.join(", ")}`;
          const caller = await callerOf(context, action);
          const objective = args.objective;
          // Every contender's request is parsed before any is admitted (the race's own fields aside).
          const { agents: _agents, best: _best, task_ids: _ids, timeout_ms: _wait, ...options } = raw;
          const requests = new Map(
            args.agents.map((agent) => [
              agent,
              toDelegationRequest({ ...options, objective, agent, isolation: "worktree" }),
            ]),
          );
          const started = await startGovernedRace({
            context,
            caller,
            action,
            objective,
            agents: args.agents,
            mode: args.best ? "best" : "first",
            requestFor: (agent) => requests.get(agent)!,
          });
          ids = started.records.map((record) => record.id);
        }
        const stop = keepAlive(extra, "waiting for the race's contenders", args.timeout_ms);
        let waited: Awaited<ReturnType<typeof awaitTasks>>;
        try {
          waited = await awaitTasks(
            context.root,
            { task_ids: ids, timeout_ms: args.timeout_ms },
            { signal: AbortSignal.any([context.session, extra.signal]), by: "mcp" },
          );
        } finally {
          stop();
        }
        const records: TaskRecord[] = [];
        for (const id of ids)
          if (!waited.missing.includes(id)) records.push(await loadTask(context.root, id));
        objective ??= records[0]?.state.objective;
        // The race these tasks are the contenders of (absent for tasks that were not started as one).
        const raceId = records[0]
          ? (await readPlan(taskDirOf(context.root, records[0].id)))?.race?.id
          : undefined;
        const look = raceId ? await lookAtRace(context.root, raceId) : undefined;
        const comparison = look?.comparison ?? (await compareTasks(records));
        const decision = look?.decision ?? null;
        const decided =
          decision?.state === "decided" ? ` Winner: ${decision.winner}. ${decision.reason}` : "";
        return toolResult(
          {
            objective: objective ?? null,
            race_id: raceId ?? null,
            status: waited.status,
            task_ids: ids,
            pending: waited.pending,
            missing: waited.missing,
            decision,
            cancelled: look?.cancelled ?? [],
            comparison,
          },
          waited.status === "complete"
            ? `All ${ids.length} contenders finished.${decided || (decision ? ` ${decision.reason}` : " Compare, then caesar_diff / caesar_apply the winner.")}`
            : `${waited.pending.length} of ${ids.length} still running.${decided} Compare again later with caesar_race {"task_ids": ${JSON.stringify(ids)}}.`,
        );
      }),
  );
}
