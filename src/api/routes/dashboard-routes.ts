import { Hono } from "hono";
import { isValidTaskId } from "../../protocol/ids.js";
import * as z from "../../support/zod.js";
import type { ApiContext } from "../api-context.js";
import { ApiError } from "../api-error.js";
import type { IndexedTask } from "../index/indexed-task.js";
import { PATHS } from "../protocol-ids.js";
import type { TaskDiff, TaskListPage, TaskPage } from "../response-schema.js";
import { describeTask, summarizeTask } from "../views/task-summary.js";
import type { ApiEnv } from "./guards.js";
import { streamTaskEvents, streamWorkspace } from "./sse-routes.js";

const ListQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).optional(),
  before: z.coerce.number().int().positive().optional(),
});

/** What the dashboard reads besides the query contract: the task list, one task, its diff, live streams. */
export function dashboardRoutes(ctx: ApiContext): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();

  app.get(PATHS.tasks, (c) => {
    const parsed = ListQuerySchema.safeParse(c.req.query());
    if (!parsed.success) {
      throw new ApiError(
        "invalid_argument",
        `Invalid query: ${parsed.error.issues.map((i) => `${i.path.join(".") || "query"}: ${i.message}`).join("; ")}.`,
        "limit is 1–500, before a change number.",
      );
    }
    const { limit = 100, before } = parsed.data;
    const all = ctx.index.list();
    const start = before === undefined ? 0 : firstBelow(all, before);
    const page = all.slice(start, start + limit);
    return c.json({
      runId: ctx.index.runId,
      revision: ctx.index.revision,
      total: all.length,
      tasks: page.map(summarizeTask),
      nextBefore: start + limit < all.length ? (page.at(-1)?.state.change_number ?? null) : null,
    } satisfies TaskListPage);
  });

  app.get(`${PATHS.tasks}/:id`, async (c) => {
    const task = await findTask(ctx, c.req.param("id"));
    return c.json({
      runId: ctx.index.runId,
      revision: ctx.index.revision,
      ...describeTask(task),
    } satisfies TaskPage);
  });

  app.get(`${PATHS.tasks}/:id/diff`, async (c) => {
    const task = await findTask(ctx, c.req.param("id"));
    return c.json({ taskId: task.id, ...(await ctx.changes.diffOf(task)) } satisfies TaskDiff);
  });

  app.get(`${PATHS.tasks}/:id/events`, async (c) =>
    streamTaskEvents(c, ctx, await findTask(ctx, c.req.param("id"))),
  );
  app.get(PATHS.stream, (c) => streamWorkspace(c, ctx));
  return app;
}

/**
 * The task of an id from a URL. One the index has not seen yet (just created: a page opened from the link
 * `caesar run --detach` printed) is looked for on disk before the answer is 404.
 */
export async function findTask(ctx: ApiContext, id: string): Promise<IndexedTask> {
  if (!isValidTaskId(id)) {
    const shown = JSON.stringify(String(id).slice(0, 140));
    throw new ApiError("invalid_argument", `Invalid task id ${shown}.`, "A task id looks like t_7f3a9c21.");
  }
  if (!ctx.index.task(id)) await ctx.index.refresh();
  const task = ctx.index.task(id);
  if (!task)
    throw new ApiError(
      "task_not_found",
      `No task ${id} in this workspace.`,
      "List tasks with GET /api/tasks.",
    );
  return task;
}

/** Index of the first task (newest first) whose change number is below `before`. */
function firstBelow(tasks: readonly IndexedTask[], before: number): number {
  const index = tasks.findIndex((task) => (task.state.change_number ?? 0) < before);
  return index === -1 ? tasks.length : index;
}
