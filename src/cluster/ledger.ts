import { type BudgetLimits, type Ledger, pruneLedger, reserveIn, settleIn } from "../policy/budget.js";
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

export async function reserveClusterBudget(
  cluster: Cluster,
  queue: string,
  tree: string,
  taskId: string,
  limits: BudgetLimits,
): Promise<void> {
  await withClusterLedger(cluster, queue, tree, (ledger) => reserveIn(ledger, taskId, limits));
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
