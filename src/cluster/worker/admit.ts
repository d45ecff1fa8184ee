import { isAbsolute, normalize, sep } from "node:path";
import type { EffectiveConfig } from "../../config/effective.js";
import { admissionOf } from "../../policy/admission.js";
import { checkProjectRelativePath } from "../../workspace/materialise.js";
import type { TaskMessage } from "../wire.js";
import { untrustedCommandsOf } from "./trust.js";

/**
 * What a worker checks of a task before it runs it. A message in the queue is untrusted input like any
 * other: the submitter resolved its plan against its own policy, and the worker holds it to its own —
 * the agent must be one it serves and allows, the delegation depth within its `[policy] max_depth`, and
 * every path inside the worktree. Undefined: admitted; otherwise why not (the task is finished failed).
 */
export function refusalOf(
  message: TaskMessage,
  served: readonly string[],
  config: EffectiveConfig,
  workerId: string,
): { code: string; message: string } | undefined {
  const { plan } = message;
  const refuse = (text: string) => ({
    code: "refused_by_worker",
    message: `Worker ${workerId} refused the task: ${text}`,
  });
  if (!served.includes(plan.agent)) return refuse(`it does not serve agent "${plan.agent}".`);
  const admission = admissionOf(config, plan.agent);
  if (!admission.allowed) return refuse(`agent "${plan.agent}" is ${admission.reason} in its clone.`);
  const maxDepth = config.policy.max_depth.value;
  if (plan.depth > maxDepth)
    return refuse(`delegation depth ${plan.depth} exceeds its [policy] max_depth (${maxDepth}).`);
  const prefix = normalize(plan.repo_prefix || ".");
  if (isAbsolute(plan.repo_prefix) || prefix === ".." || prefix.startsWith(`..${sep}`))
    return refuse(`the task's workspace ${JSON.stringify(plan.repo_prefix)} is outside the repository.`);
  try {
    for (const path of plan.worktree.copy) checkProjectRelativePath(path, "copy");
    for (const path of plan.worktree.link) checkProjectRelativePath(path, "link");
  } catch (error) {
    return refuse((error as Error).message);
  }
  // Arguments for the agent's command line are commands in effect (`--mcp-config`, `-c`): they run only on
  // the machine that gives them.
  if (plan.extra_args.length > 0)
    return {
      code: "untrusted_command",
      message: `Worker ${workerId} refused the task: it carries extra arguments for the agent's command line (${plan.extra_args.map((arg) => JSON.stringify(arg)).join(" ")}), which a worker never takes from a queue message. Send the task without them, or declare them in the worker clone's [[agent]] args.`,
    };
  if (plan.mcp_servers.length > 0)
    return {
      code: "untrusted_command",
      message: `Worker ${workerId} refused the task: it carries MCP servers for the agent (${plan.mcp_servers.map((server) => server.name).join(", ")}), programs a worker never takes from a queue message. Send the task without them.`,
    };
  const untrusted = untrustedCommandsOf(plan, config);
  if (untrusted.length > 0) {
    const listed = untrusted.map((item) => `${item.what} \`${item.command}\``).join("; ");
    return {
      code: "untrusted_command",
      message: `Worker ${workerId} refused the task: it carries commands its own configuration does not have: ${listed}. A worker runs only the [worktree] setup and checks its clone's configuration lists ([worktree] setup, [checks] default, a role's checks): commit them there, or send the task without them.`,
    };
  }
  return undefined;
}

/** The agent a queue message was published for: the last token of its subject. */
export function subjectAgent(subject: string): string {
  return subject.slice(subject.lastIndexOf(".") + 1);
}
