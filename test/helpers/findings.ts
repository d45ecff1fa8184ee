import { UNSANDBOXED_TITLE } from "../../src/engine/lifecycle/plan.js";

/**
 * A task's findings but the one saying it ran without an OS sandbox: under the default `[sandbox] mode =
 * "auto"`, every task has it on a machine where bubblewrap cannot run, whatever the test is about.
 */
export function besidesSandbox<T extends { title: string }>(findings: T[]): T[] {
  return findings.filter((finding) => finding.title !== UNSANDBOXED_TITLE);
}
