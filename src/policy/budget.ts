import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeJsonAtomic } from "../support/atomic-file.js";
import { CaesarError } from "../support/errors.js";
import { withFileLock } from "../support/file-lock.js";

/**
 * One budget per delegation tree: a parent and its bounded descendants draw from the same ledger. A task
 * reserves its slot before anything exists, then commits it (with its reported cost) or releases it (if
 * it never ran). A refused delegation spends nothing. The ledger's rules are here; where it is kept is
 * the caller's: a file under a lock on one machine (`.caesar/state/budgets/<tree>.json`, below), or a
 * key of a cluster's KV bucket updated with compare-and-set (cluster/ledger.ts).
 */
export interface BudgetLimits {
  max_tasks_per_hour: number | null;
  max_cost_per_day: number | null;
}

export interface LedgerEntry {
  task_id: string;
  at: string;
  state: "reserved" | "committed" | "released";
  cost_usd: number;
}

export interface Ledger {
  tree: string;
  entries: LedgerEntry[];
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Add a reservation for `taskId` to the ledger, or throw the refusal (the ledger is then unchanged). */
export function reserveIn(ledger: Ledger, taskId: string, limits: BudgetLimits, now = Date.now()): void {
  const live = ledger.entries.filter((e) => e.state !== "released");
  if (limits.max_tasks_per_hour !== null) {
    const recent = live.filter((e) => now - Date.parse(e.at) < HOUR).length;
    if (recent >= limits.max_tasks_per_hour) {
      throw new CaesarError(
        "budget_tasks",
        `Budget exhausted: the delegation tree of ${ledger.tree} started ${recent} task(s) in the last hour (max_tasks_per_hour = ${limits.max_tasks_per_hour}).`,
        {
          detail:
            "Wait, or raise max_tasks_per_hour in [policy] or in the caller's [risk_profiles.<name>]. Nothing was started.",
        },
      );
    }
  }
  if (limits.max_cost_per_day !== null) {
    const spent = live.filter((e) => now - Date.parse(e.at) < DAY).reduce((sum, e) => sum + e.cost_usd, 0);
    if (spent >= limits.max_cost_per_day) {
      throw new CaesarError(
        "budget_cost",
        `Budget exhausted: the delegation tree of ${ledger.tree} spent $${spent.toFixed(2)} in the last 24 h (max_cost_per_day = ${limits.max_cost_per_day}).`,
        {
          detail:
            "Wait, or raise max_cost_per_day in [policy] or in the caller's [risk_profiles.<name>]. Nothing was started.",
        },
      );
    }
  }
  ledger.entries.push({ task_id: taskId, at: new Date(now).toISOString(), state: "reserved", cost_usd: 0 });
}

/** Settle a reservation: committed with its cost when the agent ran, released when it never did. */
export function settleIn(ledger: Ledger, taskId: string, ran: boolean, costUsd: number): void {
  const entry = ledger.entries.find((e) => e.task_id === taskId);
  if (!entry) return;
  entry.state = ran ? "committed" : "released";
  entry.cost_usd = ran ? costUsd : 0;
}

/** Forget entries older than the longest window (a day): they no longer count. */
export function pruneLedger(ledger: Ledger, now = Date.now()): void {
  ledger.entries = ledger.entries.filter((e) => now - Date.parse(e.at) < DAY);
}

function ledgerPath(stateDir: string, tree: string): string {
  return join(stateDir, "budgets", `${tree}.json`);
}

async function readLedger(path: string, tree: string): Promise<Ledger> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as Ledger;
  } catch {
    return { tree, entries: [] };
  }
}

async function withLedger<T>(stateDir: string, tree: string, fn: (ledger: Ledger) => T): Promise<T> {
  const path = ledgerPath(stateDir, tree);
  await mkdir(join(stateDir, "budgets"), { recursive: true });
  return withFileLock(`${path}.lock`, async () => {
    const ledger = await readLedger(path, tree);
    const result = fn(ledger);
    pruneLedger(ledger);
    await writeJsonAtomic(path, ledger);
    return result;
  });
}

export async function reserveBudget(
  stateDir: string,
  tree: string,
  taskId: string,
  limits: BudgetLimits,
): Promise<void> {
  await withLedger(stateDir, tree, (ledger) => reserveIn(ledger, taskId, limits));
}

/** Settle a reservation: committed with its cost when the agent ran, released when it never did. */
export async function settleBudget(
  stateDir: string,
  tree: string,
  taskId: string,
  ran: boolean,
  costUsd: number,
): Promise<void> {
  await withLedger(stateDir, tree, (ledger) => settleIn(ledger, taskId, ran, costUsd));
}
