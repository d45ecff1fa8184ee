import type { EffectiveConfig } from "../../config/effective.js";
import type { TaskPlan } from "../../engine/store/task-plan.js";

/** A command a task carries that its worker's configuration does not have. */
interface UntrustedCommand {
  what: string;
  command: string;
}

/**
 * The shell commands a queue message carries — `[worktree] setup` and checks — that the worker's own
 * configuration (its clone's committed `.caesar/config.toml`, and the layers its own account set) does
 * not list. Anyone who can publish on the queue's subject could otherwise run commands as the worker's
 * account: a worker runs only the commands it would have run for a task of its own.
 */
export function untrustedCommandsOf(plan: TaskPlan, config: EffectiveConfig): UntrustedCommand[] {
  const setups = new Set(config.worktree.setup.value);
  const checks = new Set([
    ...(config.checks.default.value ?? []),
    ...Object.values(config.roles).flatMap((role) => role.checks?.value ?? []),
  ]);
  return [
    ...plan.worktree.setup
      .filter((command) => !setups.has(command))
      .map((command) => ({ what: "[worktree] setup", command })),
    ...plan.checks
      .filter((check) => !checks.has(check.command))
      .map((check) => ({ what: `a check (from ${check.from})`, command: check.command })),
  ];
}
