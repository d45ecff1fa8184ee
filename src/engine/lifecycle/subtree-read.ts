import { type Caller, governed, identifyCaller } from "./caller.js";
import { assertWithinSubtree } from "./subtree.js";

/**
 * From inside a task, reading another task's change (`diff`, a race's comparison) is limited to the
 * task's own subtree and itself, like every command that acts on tasks. Returns who asked.
 */
export async function assertMayRead(
  root: string,
  targetId: string,
  verb: string,
  options: { caller?: Caller; env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<Caller> {
  const action = `${verb} ${targetId}`;
  const caller =
    options.caller ?? (await identifyCaller(root, { action, env: options.env, cwd: options.cwd }));
  await governed(caller, action, () =>
    assertWithinSubtree(caller, targetId, `${verb}`, { includeSelf: true }),
  );
  return caller;
}
