import { errorEntry } from "../support/error-catalogue.js";
import { isCaesarError } from "../support/errors.js";

/**
 * The refusals that govern an agent (as opposed to a typo or a missing file) are those the error catalogue
 * marks `governance`: who is asking (credentials, subtree, configuration), what it may ask (agents,
 * depth, recursion, delegation, in-place writes) and how much (budgets). When the request came from a
 * task, caesar records each of these against that task (an `error` event, and a finding in its report).
 */
export function isGovernanceRefusal(error: unknown): boolean {
  return isCaesarError(error) && errorEntry(error.code).governance !== undefined;
}
