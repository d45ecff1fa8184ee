import { recordAction } from "../../policy/budget.js";
import type { EventBody } from "../../protocol/event.js";
import type { ErrorCode } from "../../support/error-catalogue.js";
import { isCaesarError, messageOf } from "../../support/errors.js";
import { controlPaths } from "../store/control.js";
import type { TaskPlan } from "../store/task-plan.js";

/** Why an agent is stopped for its tree's tool calls: one line, and its code. */
export interface OverBudget {
  code: ErrorCode;
  message: string;
}

/**
 * Counts a task's agent's tool calls in its delegation tree's ledger (`max_actions_per_hour`, shared by a
 * parent and its bounded descendants over a sliding hour), as the agent's events show them: a `tool_use`
 * that starts is one call. The counts are written in the background, those seen meanwhile in one write; once the tree has
 * made more calls than it may, the listener is told, once, and the conductor stops the agent. A ledger
 * that cannot be written stops it too (fail closed).
 */
export interface ActionMeter {
  see(body: EventBody): void;
  onExceeded(listener: (over: OverBudget) => void): void;
  /** Every count seen so far is written. */
  idle(): Promise<void>;
}

function isToolCall(body: EventBody): boolean {
  return body.type === "tool_use" && body.status === "started";
}

export function makeActionMeter(plan: TaskPlan, taskId: string): ActionMeter {
  const max = plan.budget.max_actions_per_hour;
  const tree = plan.budget.tree ?? taskId;
  // Calls seen and not yet written; one write at a time takes all of them (a burst is one write, not one
  // read-and-rewrite of the ledger per call).
  let pending = 0;
  let writing: Promise<void> = Promise.resolve();
  let busy = false;
  let over: OverBudget | undefined;
  let listener: ((over: OverBudget) => void) | undefined;
  const exceed = (reason: OverBudget) => {
    if (over) return;
    over = reason;
    listener?.(reason);
  };
  const write = async () => {
    busy = true;
    try {
      while (pending > 0 && !over) {
        const calls = pending;
        pending = 0;
        try {
          const count = await recordAction(controlPaths(plan.root).budgets, tree, taskId, max!, calls);
          if (count.exceeded)
            exceed({
              code: "budget_actions",
              message: `the delegation tree of ${tree} made ${count.made} tool call(s) in the last hour, more than max_actions_per_hour = ${max}; raise it in [policy] or the risk profile, or wait`,
            });
        } catch (error) {
          exceed({
            code: isCaesarError(error) ? error.code : "budget_ledger_unreadable",
            message: `its tool calls could not be counted: ${messageOf(error)}`,
          });
        }
      }
    } finally {
      busy = false;
    }
  };
  return {
    see(body) {
      if (max === null || over || !isToolCall(body)) return;
      pending += 1;
      if (!busy) writing = write();
    },
    onExceeded(next) {
      listener = next;
      if (over) next(over);
    },
    idle: () => writing,
  };
}
