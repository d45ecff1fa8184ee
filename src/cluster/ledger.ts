import type { BudgetLedger } from "../engine/lifecycle/start.js";
import { controlPaths } from "../engine/store/control.js";
import { readPlan } from "../engine/store/task-plan.js";
import { taskDirOf } from "../engine/store/task-store.js";
import {
  type BudgetLimits,
  cancelIn,
  cancelReservations,
  type Ledger,
  parseLedgerText,
  pruneLedger,
  reserveBudget,
  reserveIn,
  settleIn,
} from "../policy/budget.js";
import { updateWithCas } from "./cas.js";
import type { Cluster } from "./connection.js";
import { BUDGETS_BUCKET, budgetKey, CLOCK_KEY } from "./names.js";
import { serverTimeOf } from "./server-clock.js";

/**
 * A delegation tree's budget when the tree spans machines: the same ledger as on one machine
 * (policy/budget.ts), kept as one KV entry per tree and updated with compare-and-set — two submitters
 * reserving at once never both take the last place.
 */
async function withClusterLedger(
  cluster: Cluster,
  queue: string,
  tree: string,
  change: (ledger: Ledger, now: number) => void,
): Promise<void> {
  const kv = await cluster.bucket(BUDGETS_BUCKET);
  // Submitters on many machines stamp and judge the same entries: the hour and the day are the server's,
  // or a machine whose clock runs a day ahead would find every place free (and one behind, none).
  const now = await serverTimeOf(kv, CLOCK_KEY, String(process.pid));
  const key = budgetKey(queue, tree);
  await updateWithCas(kv, key, (entry) => {
    // An entry that is not a ledger refuses (fail closed), never counts as an empty one.
    const ledger: Ledger = entry
      ? parseLedgerText(entry.string(), `${BUDGETS_BUCKET} ${key} (the cluster's KV)`)
      : { tree, entries: [] };
    change(ledger, now);
    pruneLedger(ledger, now);
    return JSON.stringify(ledger);
  });
}

/**
 * The budget ledger remote tasks reserve in, as task creation takes it (engine/lifecycle/start.ts): a
 * tree's places are counted in one ledger only, the one of the machine or cluster its root runs on — a
 * tree rooted in a task of this project that runs here (a local agent delegating to the cluster) keeps
 * counting in this project's file ledger; a new tree, or one rooted in a remote task, in the cluster's.
 */
export function clusterLedger(cluster: Cluster, queue: string, root: string): BudgetLedger {
  const budgets = controlPaths(root).budgets;
  const here = async (tree: string, existing: boolean) =>
    existing && (await readPlan(taskDirOf(root, tree)).catch(() => undefined))?.remote === null;
  return {
    reserve: async (tree, taskIds, limits, existing) =>
      (await here(tree, existing))
        ? reserveBudget(budgets, tree, taskIds, limits, existing)
        : reserveClusterBudget(cluster, queue, tree, taskIds, limits, existing),
    cancel: async (tree, taskIds) => {
      await cancelReservations(budgets, tree, taskIds).catch(() => undefined);
      await withClusterLedger(cluster, queue, tree, (ledger) => cancelIn(ledger, taskIds));
    },
  };
}

export async function reserveClusterBudget(
  cluster: Cluster,
  queue: string,
  tree: string,
  taskIds: string[],
  limits: BudgetLimits,
  existing: boolean,
): Promise<void> {
  await withClusterLedger(cluster, queue, tree, (ledger, now) =>
    reserveIn(ledger, taskIds, limits, existing, now),
  );
}

export async function settleClusterBudget(
  cluster: Cluster,
  queue: string,
  tree: string,
  taskId: string,
  ran: boolean,
  costUsd: number,
): Promise<void> {
  await withClusterLedger(cluster, queue, tree, (ledger) => settleIn(ledger, taskId, ran, costUsd));
}
