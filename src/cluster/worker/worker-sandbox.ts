import { unmaskedKeysFinding } from "../../agents/key-masks.js";
import { findAdapter } from "../../agents/registry.js";
import type { EffectiveConfig } from "../../config/effective.js";
import { egressHosts } from "../../engine/lifecycle/egress-plan.js";
import { UNSANDBOXED_TITLE } from "../../engine/lifecycle/plan.js";
import type { TaskPlan } from "../../engine/store/task-plan.js";
import { decideSandbox } from "../../sandbox/decide.js";
import { messageOf } from "../../support/errors.js";

/**
 * The OS sandbox a task runs in on a worker: the worker's own `[sandbox]` decides, never the message (whose
 * sender may turn it off: anyone who can publish to the queue). Under `required` where none can run, the
 * task is refused; under `auto`, it runs unsandboxed with the same high finding as a local task.
 */
export function workerSandbox(
  plan: TaskPlan,
  config: EffectiveConfig,
  root: string,
  workerId: string,
):
  | { sandbox: TaskPlan["sandbox"]; findings: TaskPlan["findings"] }
  | { refusal: { code: string; message: string } } {
  const mode = config.sandbox.mode;
  let decision: ReturnType<typeof decideSandbox>;
  try {
    decision = decideSandbox(mode.value, mode.source);
  } catch (error) {
    return {
      refusal: {
        code: "sandbox_unavailable",
        message: `Worker ${workerId} refused the task: ${messageOf(error)}`,
      },
    };
  }
  const adapter = findAdapter(config, root, plan.agent);
  const findings: TaskPlan["findings"] = [];
  if (decision.backend === null && mode.value === "auto")
    findings.push({
      severity: "high",
      title: UNSANDBOXED_TITLE,
      detail: `${decision.detail}. With [sandbox] mode = "auto" (${mode.source}) on worker ${workerId}, it ran unsandboxed.`,
    });
  const unmasked =
    decision.backend !== null && config.sandbox.mask_keys.value
      ? unmaskedKeysFinding(adapter.product, process.env)
      : undefined;
  if (unmasked) findings.push(unmasked);
  return {
    sandbox: {
      backend: decision.backend,
      detail: decision.detail,
      // Under the worker's sandbox, its agent reaches its model (as the worker's environment points it)
      // and, when the task has the network, the worker's [sandbox] allow_hosts: through the egress proxy.
      cuts_network: decision.backend !== null,
      egress: decision.backend !== null ? egressHosts(adapter, plan.network, config, process.env) : null,
      mask_keys: decision.backend !== null && config.sandbox.mask_keys.value,
    },
    findings,
  };
}
