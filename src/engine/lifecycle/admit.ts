import type { AgentAdapter } from "../../agents/adapter.js";
import { CaesarError, isCaesarError, messageOf } from "../../support/errors.js";
import type { Caller } from "./caller.js";
import { resolvePlan, type TaskPlan } from "./plan.js";
import type { DelegationRequest } from "./request.js";

/**
 * Resolve every request of one caller into a plan before anything starts (all or none). A refusal names the task by
 * its position and objective, lists every other refusal, and says that nothing was started.
 */
export async function admitAll(
  requests: { objective: string; build: () => DelegationRequest }[],
  context: { root: string; env?: NodeJS.ProcessEnv; cwd?: string },
  caller: Caller,
): Promise<{ plan: TaskPlan; adapter: AgentAdapter }[]> {
  const results = await Promise.allSettled(
    requests.map(async (request) =>
      resolvePlan(request.build(), {
        root: context.root,
        ...(context.env ? { env: context.env } : {}),
        ...(context.cwd ? { cwd: context.cwd } : {}),
        caller,
      }),
    ),
  );
  const refusals = results.flatMap((result, index) =>
    result.status === "rejected" ? [{ index, error: result.reason as unknown }] : [],
  );
  if (refusals.length > 0) {
    const describe = ({ index, error }: { index: number; error: unknown }) =>
      `task ${index + 1} (${JSON.stringify(requests[index]!.objective.slice(0, 60))}): ${messageOf(error)}${
        isCaesarError(error) && error.detail ? ` ${error.detail}` : ""
      }`;
    const first = refusals[0]!;
    throw new CaesarError(
      "fanout_refused",
      `Nothing was started: ${refusals.length} of ${requests.length} task(s) refused; ${describe(first)}`,
      {
        detail: [
          ...refusals.slice(1).map(describe),
          "Fix or remove the refused task(s) and call again; admission is all or none.",
        ].join("\n"),
        data: { refused: refusals.map((refusal) => refusal.index) },
      },
    );
  }
  return results.map(
    (result) => (result as PromiseFulfilledResult<{ plan: TaskPlan; adapter: AgentAdapter }>).value,
  );
}
