import { readdir } from "node:fs/promises";
import { isValidTaskId } from "../../protocol/ids.js";
import { CaesarError } from "../../support/errors.js";
import { controlPaths } from "../store/control.js";
import { readPlan } from "../store/task-plan.js";
import { readState, taskDirOf } from "../store/task-store.js";
import type { Caller } from "./caller.js";

/** How a task hangs in its delegation tree, from caesar's own records (never a task directory's mirror). */
export interface TreeLink {
  id: string;
  parent_id: string | null;
  bounded: boolean;
}

/** Longer than any chain `max_depth` allows; a guard against a damaged record, not a rule. */
const MAX_CHAIN = 64;

async function linkOf(root: string, id: string): Promise<TreeLink | undefined> {
  if (!isValidTaskId(id)) return undefined;
  const plan = await readPlan(taskDirOf(root, id));
  return plan ? { id, parent_id: plan.parent_id, bounded: plan.bounded } : undefined;
}

/** Is `id` a descendant of `ancestor` (or `ancestor` itself, with `includeSelf`)? Walks `id`'s parents. */
export async function isInSubtree(
  root: string,
  ancestor: string,
  id: string,
  includeSelf = false,
): Promise<boolean> {
  if (id === ancestor) return includeSelf;
  let current = await linkOf(root, id);
  for (let step = 0; current && step < MAX_CHAIN; step++) {
    if (current.parent_id === null) return false;
    if (current.parent_id === ancestor) return true;
    current = await linkOf(root, current.parent_id);
  }
  return false;
}

/** Every task caesar has a record of in this project, as links (one read of each plan). */
export async function readTree(root: string): Promise<TreeLink[]> {
  let ids: string[];
  try {
    ids = (await readdir(controlPaths(root).tasks)).filter(isValidTaskId);
  } catch {
    return [];
  }
  const links = await Promise.all(ids.map((id) => linkOf(root, id)));
  return links.filter((link): link is TreeLink => link !== undefined);
}

/**
 * The descendants of a task, nearest first. With `boundedOnly`, the walk stops at an independent child:
 * it and its own sub-tasks belong to a tree of their own.
 */
export async function descendantsOf(
  root: string,
  id: string,
  options: { boundedOnly?: boolean } = {},
): Promise<TreeLink[]> {
  const tree = await readTree(root);
  const children = new Map<string, TreeLink[]>();
  for (const link of tree) {
    if (link.parent_id === null) continue;
    children.set(link.parent_id, [...(children.get(link.parent_id) ?? []), link]);
  }
  const out: TreeLink[] = [];
  const queue = [id];
  const seen = new Set<string>([id]);
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      if (seen.has(child.id) || (options.boundedOnly && !child.bounded)) continue;
      seen.add(child.id);
      out.push(child);
      queue.push(child.id);
    }
  }
  return out;
}

/**
 * From inside a task, a command acts only within that task's subtree: the tasks it started, directly or
 * through its own sub-tasks (and, for reading, itself). A person is not limited.
 */
export async function assertWithinSubtree(
  caller: Caller,
  targetId: string,
  verb: string,
  options: { includeSelf?: boolean } = {},
): Promise<void> {
  if (caller.kind === "person") return;
  if (await isInSubtree(caller.root, caller.id, targetId, options.includeSelf === true)) return;
  const which = targetId === caller.id ? "itself" : `${targetId}, which it did not start`;
  throw new CaesarError(
    "outside_subtree",
    `Refused: task ${caller.id} may only ${verb} tasks it started (its subtree), not ${which}.`,
    {
      detail: `A command run from inside a task acts only within that task's subtree${options.includeSelf ? " (and on the task itself)" : ""}. Nothing was done. ${caller.id}'s sub-tasks: \`caesar ps\` lists their parent.`,
    },
  );
}

/** A task's direct sub-tasks as `status` shows them: bounded or independent, where they are, who stopped them. */
export interface ChildSummary {
  task_id: string;
  agent: string;
  bounded: boolean;
  phase: string;
  outcome: string | null;
  cancelled_by: string | null;
}

export async function listChildren(root: string, id: string): Promise<ChildSummary[]> {
  const children = (await readTree(root)).filter((link) => link.parent_id === id);
  const summaries = await Promise.all(
    children.map(async (child) => {
      try {
        const state = await readState(taskDirOf(root, child.id));
        return {
          task_id: child.id,
          agent: state.agent,
          bounded: child.bounded,
          phase: state.phase,
          outcome: state.outcome,
          cancelled_by: state.cancel_requested?.by ?? null,
          created_at: state.created_at,
        };
      } catch {
        return undefined;
      }
    }),
  );
  return summaries
    .filter((summary) => summary !== undefined)
    .sort((a, b) => a.created_at.localeCompare(b.created_at))
    .map(({ created_at: _created, ...summary }) => summary);
}
