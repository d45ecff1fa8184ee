import { isCaesarError } from "../support/errors.js";

/**
 * The refusals that govern an agent (as opposed to a typo or a missing file): when the request came from
 * a task, caesar records each of these against that task (an `error` event, and a finding in its report).
 */
const GOVERNANCE_CODES = new Set([
  // who is asking
  "nested_unproven",
  "nested_without_credentials",
  "outside_subtree",
  "configuration_in_task",
  // what it may ask
  "agent_not_allowed",
  "delegation_depth",
  "recursion_refused",
  "spawn_depth_cap",
  "delegation_forbidden",
  "delegate_unreachable",
  "delegation_escalation",
  "inplace_write_refused",
  // how much
  "budget_tasks",
  "budget_cost",
]);

export function isGovernanceRefusal(error: unknown): boolean {
  return isCaesarError(error) && GOVERNANCE_CODES.has(error.code);
}
