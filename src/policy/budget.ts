import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeJsonAtomic } from "../support/atomic-file.js";
import { CaesarError, errnoOf, messageOf } from "../support/errors.js";
import { withLock } from "../support/lock.js";
import { makePrivateDir } from "../support/private-dir.js";
import * as z from "../support/zod.js";

/**
 * One budget per delegation tree: a parent and its bounded descendants draw from the same ledger. Tasks
 * reserve their places before anything exists — a fan-out reserves all of its places at once, or none —
 * then each commits its place (with its reported cost) or releases it (if it never ran). A refused
 * delegation spends nothing. The ledger's rules are here; where it is kept is the caller's: a file
 * under a lock on one machine (`<control>/budgets/<tree>.json`, out of the agents' reach, below), or a
 * key of a cluster's KV bucket updated with compare-and-set (cluster/ledger.ts).
 */
export interface BudgetLimits {
  max_tasks_per_hour: number | null;
  max_cost_per_day: number | null;
  /** Tool calls the tree's agents may make per hour (null: unlimited; absent in plans made before it). */
  max_actions_per_hour?: number | null | undefined;
}

export interface LedgerEntry {
  task_id: string;
  at: string;
  state: "reserved" | "committed" | "released";
  cost_usd: number;
}

/** Tool calls of one of the tree's agents, counted at once (`max_actions_per_hour`). */
export interface LedgerAction {
  task_id: string;
  at: string;
  /** How many calls (1 when absent): a burst is counted in one write. */
  count?: number | undefined;
}

export interface Ledger {
  tree: string;
  entries: LedgerEntry[];
  /** The tree's agents' tool calls of the last hour (absent in a ledger written before they were counted). */
  actions?: LedgerAction[];
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * Add one reservation per task to the ledger, all or none, or throw the refusal (the ledger is then
 * unchanged). `existing` says whether the tree already has a task (a nested request) or starts with
 * these (a root, an independent child): only an existing tree is named in a refusal — a new one has no
 * id anyone could look up.
 */
export function reserveIn(
  ledger: Ledger,
  taskIds: string[],
  limits: BudgetLimits,
  existing: boolean,
  now = Date.now(),
): void {
  const tree = ledger.tree;
  const live = ledger.entries.filter((e) => e.state !== "released");
  const asked = taskIds.length;
  const whose = existing ? `the delegation tree of ${tree}` : "a new delegation tree";
  if (limits.max_tasks_per_hour !== null) {
    const recent = live.filter((e) => now - Date.parse(e.at) < HOUR).length;
    if (recent + asked > limits.max_tasks_per_hour) {
      const max = limits.max_tasks_per_hour;
      const what = !existing
        ? `max_tasks_per_hour = ${max} allows ${max === 0 ? "no task" : `${max} task(s)`} in a new delegation tree${asked > 1 ? `, ${asked} asked` : ""}`
        : asked === 1
          ? `${whose} started ${recent} task(s) in the last hour (max_tasks_per_hour = ${max})`
          : `${whose} started ${recent} task(s) in the last hour; ${asked} more would exceed max_tasks_per_hour = ${max}`;
      throw new CaesarError("budget_tasks", `Budget exhausted: ${what}.`, {
        detail:
          "Wait, or raise max_tasks_per_hour in [policy] or in the caller's [risk_profiles.<name>]. Nothing was started.",
        data: { tree: existing ? tree : null, recent, asked, max: limits.max_tasks_per_hour },
      });
    }
  }
  if (limits.max_cost_per_day !== null) {
    const spent = live.filter((e) => now - Date.parse(e.at) < DAY).reduce((sum, e) => sum + e.cost_usd, 0);
    if (spent >= limits.max_cost_per_day) {
      const what = existing
        ? `${whose} spent $${spent.toFixed(2)} in the last 24 h`
        : `${whose} may spend nothing`;
      throw new CaesarError(
        "budget_cost",
        `Budget exhausted: ${what} (max_cost_per_day = ${limits.max_cost_per_day}).`,
        {
          detail:
            "Wait, or raise max_cost_per_day in [policy] or in the caller's [risk_profiles.<name>]. Nothing was started.",
        },
      );
    }
  }
  if (limits.max_actions_per_hour != null) {
    const max = limits.max_actions_per_hour;
    const made = actionsInHour(ledger, now);
    if (made >= max) {
      const what = existing
        ? `${whose} made ${made} tool call(s) in the last hour (max_actions_per_hour = ${max})`
        : `max_actions_per_hour = 0 allows no tool call in a new delegation tree`;
      throw new CaesarError("budget_actions", `Budget exhausted: ${what}.`, {
        detail:
          "Wait, or raise max_actions_per_hour in [policy] or in the caller's [risk_profiles.<name>]. Nothing was started.",
        data: { tree: existing ? tree : null, made, max },
      });
    }
  }
  const at = new Date(now).toISOString();
  for (const taskId of taskIds) ledger.entries.push({ task_id: taskId, at, state: "reserved", cost_usd: 0 });
}

function actionsInHour(ledger: Ledger, now: number): number {
  return (ledger.actions ?? [])
    .filter((action) => now - Date.parse(action.at) < HOUR)
    .reduce((sum, action) => sum + (action.count ?? 1), 0);
}

/** What a tree's tool calls add up to once one more is counted. */
export interface ActionCount {
  tree: string;
  /** Tool calls in the last hour, this one included. */
  made: number;
  max: number;
  /** This call is one more than the tree may make. */
  exceeded: boolean;
}

/**
 * Count one tool call of a task's agent in its tree's ledger (a sliding hour, shared by a parent and its
 * bounded descendants). The call is counted whatever the answer: it was made.
 */
export function recordActionIn(
  ledger: Ledger,
  taskId: string,
  max: number,
  now = Date.now(),
  calls = 1,
): ActionCount {
  ledger.actions = [
    ...(ledger.actions ?? []).filter((action) => now - Date.parse(action.at) < HOUR),
    { task_id: taskId, at: new Date(now).toISOString(), ...(calls === 1 ? {} : { count: calls }) },
  ];
  const made = actionsInHour(ledger, now);
  return { tree: ledger.tree, made, max, exceeded: made > max };
}

/** Settle a reservation: committed with its cost when the agent ran, released when it never did. */
export function settleIn(ledger: Ledger, taskId: string, ran: boolean, costUsd: number): void {
  const entry = ledger.entries.find((e) => e.task_id === taskId);
  if (!entry) return;
  entry.state = ran ? "committed" : "released";
  entry.cost_usd = ran ? costUsd : 0;
}

/** Take back reservations of tasks that will never exist (a fan-out refused after some of its places). */
export function cancelIn(ledger: Ledger, taskIds: string[]): void {
  ledger.entries = ledger.entries.filter((e) => !(taskIds.includes(e.task_id) && e.state === "reserved"));
}

/** Forget entries older than the longest window (a day): they no longer count. */
export function pruneLedger(ledger: Ledger, now = Date.now()): void {
  ledger.entries = ledger.entries.filter((e) => now - Date.parse(e.at) < DAY);
  if (ledger.actions) ledger.actions = ledger.actions.filter((a) => now - Date.parse(a.at) < HOUR);
}

function ledgerPath(budgetsDir: string, tree: string): string {
  return join(budgetsDir, `${tree}.json`);
}

const LedgerSchema = z.object({
  tree: z.string(),
  entries: z.array(
    z.object({
      task_id: z.string(),
      at: z.string(),
      state: z.enum(["reserved", "committed", "released"]),
      cost_usd: z.number(),
    }),
  ),
  actions: z
    .array(z.object({ task_id: z.string(), at: z.string(), count: z.number().int().positive().optional() }))
    .optional(),
});

/**
 * A tree's ledger; a tree that never had one starts empty. A ledger that exists but cannot be read or is
 * not a ledger fails closed: counting it as empty would hand the tree its whole budget again.
 */
async function readLedger(path: string, tree: string): Promise<Ledger> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return { tree, entries: [] };
    throw unreadableLedger(path, messageOf(error), error);
  }
  return parseLedgerText(text, path);
}

/**
 * A ledger's text as kept (a file, a cluster's KV entry: `where` names it), validated: anything that is not
 * a ledger throws budget_ledger_unreadable, never reads as an empty one.
 */
export function parseLedgerText(text: string, where: string): Ledger {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw unreadableLedger(where, `not JSON (${messageOf(error)})`, error);
  }
  const parsed = LedgerSchema.safeParse(raw);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw unreadableLedger(
      where,
      `not a budget ledger (${first?.path.join(".") || "top"}: ${first?.message})`,
    );
  }
  return parsed.data;
}

function unreadableLedger(path: string, why: string, cause?: unknown): CaesarError {
  return new CaesarError("budget_ledger_unreadable", `The budget ledger ${path} cannot be read: ${why}.`, {
    detail:
      "Nothing that draws on this budget starts until it is repaired: restore it, or remove it to forget what this delegation tree spent (its limits then count from zero). Nothing was started.",
    data: { path },
    cause,
  });
}

async function withLedger<T>(budgetsDir: string, tree: string, fn: (ledger: Ledger) => T): Promise<T> {
  const path = ledgerPath(budgetsDir, tree);
  await makePrivateDir(budgetsDir);
  return withLock(`${path}.lock`, async () => {
    const ledger = await readLedger(path, tree);
    const result = fn(ledger);
    pruneLedger(ledger);
    await writeJsonAtomic(path, ledger);
    return result;
  });
}

/** Reserve one place per task in a tree's file ledger, all or none, under one lock (see reserveIn). */
export async function reserveBudget(
  budgetsDir: string,
  tree: string,
  taskIds: string[],
  limits: BudgetLimits,
  existing: boolean,
): Promise<void> {
  await withLedger(budgetsDir, tree, (ledger) => reserveIn(ledger, taskIds, limits, existing));
}

/** Count `calls` tool calls of `taskId`'s agent in its tree's file ledger, under the ledger's lock. */
export async function recordAction(
  budgetsDir: string,
  tree: string,
  taskId: string,
  max: number,
  calls = 1,
): Promise<ActionCount> {
  return withLedger(budgetsDir, tree, (ledger) => recordActionIn(ledger, taskId, max, Date.now(), calls));
}

export async function cancelReservations(budgetsDir: string, tree: string, taskIds: string[]): Promise<void> {
  await withLedger(budgetsDir, tree, (ledger) => cancelIn(ledger, taskIds));
}

export async function settleBudget(
  budgetsDir: string,
  tree: string,
  taskId: string,
  ran: boolean,
  costUsd: number,
): Promise<void> {
  await withLedger(budgetsDir, tree, (ledger) => settleIn(ledger, taskId, ran, costUsd));
}
