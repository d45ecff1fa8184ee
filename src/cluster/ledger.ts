import type { BudgetLedger } from "../engine/lifecycle/start.js";
import {
  type BudgetLimits,
  cancelIn,
  type Ledger,
  pruneLedger,
  reserveIn,
  settleIn,
} from "../policy/budget.js";
import { updateWithCas } from "./cas.js";
import type { Cluster } from "./connection.js";
import { BUDGETS_BUCKET, budgetKey } from "./names.js";

/**
 * A delegation tree's budget when the tree spans machines: the same ledger as on one machine
 * (policy/budget.ts), kept as one KV entry per tree and updated with compare-and-set — two submitters
 * reserving at once never both take the last place.
 */
async function withClusterLedger(
  cluster: Cluster,
  queue: string,
  tree: string,
  change: (ledger: Ledger) => void,
): Promise<void> {
  const kv = await cluster.bucket(BUDGETS_BUCKET);
  await updateWithCas(kv, budgetKey(queue, tree), (entry) => {
    const ledger: Ledger = entry ? (entry.json<Ledger>() ?? { tree, entries: [] }) : { tree, entries: [] };
    if (!Array.isArray(ledger.entries)) ledger.entries = [];
    change(ledger);
    pruneLedger(ledger);
    return JSON.stringify(ledger);
  });
}

/** The budget ledger of a cluster's queue, as task creation takes it (engine/lifecycle/start.ts). */
export function clusterLedger(cluster: Cluster, queue: string): BudgetLedger {
  return {
    reserve: (tree, taskIds, limits, existing) =>
      reserveClusterBudget(cluster, queue, tree, taskIds, limits, existing),
    cancel: (tree, taskIds) => withClusterLedger(cluster, queue, tree, (ledger) => cancelIn(ledger, taskIds)),
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
  await withClusterLedger(cluster, queue, tree, (ledger) => reserveIn(ledger, taskIds, limits, existing));
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
