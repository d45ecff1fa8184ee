import { readEventLines } from "../../engine/follow/event-spans.js";
import { markFinishedLines } from "../../engine/store/event-owner.js";
import { ApiError } from "../api-error.js";
import type { TaskIndex } from "../index/task-index.js";
import type { TimelineEntry } from "../index/timeline.js";
import type { RepositoryCatalog } from "./repository-view.js";

export const DEFAULT_TIMELINE_LIMIT = 50;

export interface TimelineArguments {
  actor?: string | undefined;
  repo?: string | undefined;
  before?: number | undefined;
  limit?: number | undefined;
}

/**
 * `timeline.read`: the entries of every task, newest first, filtered by actor and repository, one page at
 * a time (`before` = the previous page's `nextBefore`). The events themselves are read back from
 * events.jsonl by their byte ranges, a few lines per task.
 */
export async function readTimeline(
  index: TaskIndex,
  repositories: RepositoryCatalog,
  args: TimelineArguments,
) {
  const limit = args.limit ?? DEFAULT_TIMELINE_LIMIT;
  let task: ReturnType<TaskIndex["task"]>;
  if (args.repo !== undefined) {
    const repository = repositories.find(args.repo);
    if (!repository) throw repositoryNotFound(args.repo, repositories);
    task = repository.kind === "worktree" ? repository.task : undefined;
  }
  const page = index.timeline.page({ actor: args.actor, task, before: args.before, limit });
  const data = await readEntryData(page.entries);
  const projectId = repositories.projectId;
  return {
    entries: page.entries.map((entry, i) => ({
      position: entry.position,
      at: entry.at ?? atOf(data[i]),
      actor: entry.actor,
      kind: entry.kind,
      type: entry.type,
      taskId: entry.task.id,
      changeNumber: entry.task.state.change_number,
      repository: entry.task.state.worktree ? entry.task.id : projectId,
      ordinal: entry.kind === "event" ? entry.ordinal : null,
      data: data[i] ?? null,
    })),
    nextBefore: page.more ? page.entries.at(-1)!.position : null,
    filters: { actor: args.actor ?? null, repo: args.repo ?? null, before: args.before ?? null, limit },
  };
}

/** The event documents of a page (from their byte ranges), or the recorded action for user entries. */
async function readEntryData(entries: readonly TimelineEntry[]): Promise<unknown[]> {
  const out: unknown[] = new Array(entries.length).fill(null);
  const byTask = new Map<TimelineEntry["task"], number[]>();
  entries.forEach((entry, i) => {
    if (entry.kind !== "event") {
      out[i] = entry.data;
      return;
    }
    const list = byTask.get(entry.task) ?? [];
    list.push(i);
    byTask.set(entry.task, list);
  });
  await Promise.all(
    [...byTask].map(async ([task, indices]) => {
      const ranges = indices.map((i) => task.spans.at(entries[i]!.ordinal - 1));
      try {
        const lines = await markFinishedLines(await readEventLines(task.paths.events, ranges), task.dir);
        indices.forEach((entryIndex, k) => {
          out[entryIndex] = lines[k] ?? null;
        });
      } catch {
        // The file went away (the task directory was removed meanwhile): those entries read as null.
      }
    }),
  );
  return out;
}

export function repositoryNotFound(id: string, repositories: RepositoryCatalog): ApiError {
  return new ApiError(
    "repository_not_found",
    `No repository ${JSON.stringify(id)} in this workspace.`,
    `The project repository is "${repositories.projectId}"; a task's worktree is named by its task id.`,
  );
}

function atOf(event: unknown): string | null {
  const at = (event as { at?: unknown } | null)?.at;
  return typeof at === "string" ? at : null;
}
