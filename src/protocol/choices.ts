import * as z from "../support/zod.js";

/**
 * The closed sets of values a request, a role, the policy and a task document share: defined once here,
 * and everything that lists them (flags' choices, tool and HTTP schemas, configuration tables) takes them
 * from here. A module of its own, small, so that a command's flags can name them without loading the
 * schemas of whole documents.
 */

/** A closed set whose refusal lists it in plain words, the same on every surface. */
function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: `expected one of ${values.join(", ")}` });
}

export const ModeSchema = oneOf(["read-only", "write"]).describe(
  "read-only: the agent must not change files.",
);
export type Mode = z.infer<typeof ModeSchema>;

/** Where a task may be asked to work: `auto` lets the mode decide (see plan.ts). */
export const IsolationRequestSchema = oneOf(["auto", "inplace", "worktree"]);
export type IsolationRequest = z.infer<typeof IsolationRequestSchema>;

/** The network asked for an agent: `auto` lets what the agent can control decide. */
export const TriStateNetworkSchema = oneOf(["auto", "on", "off"]);
export type NetworkRequest = z.infer<typeof TriStateNetworkSchema>;

/** How a later attempt reaches the agent when checks fail: its own session continued, or a new run. */
export const FollowUpSchema = oneOf(["resume", "fresh"]);
export type FollowUp = z.infer<typeof FollowUpSchema>;
