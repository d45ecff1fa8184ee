import { loadTask } from "../engine/store/task-store.js";
import { CaesarError } from "../support/errors.js";
import { deleteKeepRef, keepRefName, pushKeepRef } from "../workspace/result-ref.js";

export interface PinnedResult {
  id: string;
  pinned: boolean;
  remote: string;
  ref: string;
  commit: string;
}

/**
 * `caesar cluster pin|unpin <id>`: keep a remote task's result on the shared remote past `[cluster]
 * keep_results` (its commit under `refs/caesar/keep/<id>`, which workers never prune), or let it go.
 * `caesar apply` pins what it applies.
 */
export async function pinResult(root: string, typedId: string, pin: boolean): Promise<PinnedResult> {
  const { id, state } = await loadTask(root, typedId);
  if (!state.remote) {
    throw new CaesarError(
      "not_remote",
      `Task ${id} ran on this machine: its result is not on a cluster's remote.`,
      {
        detail:
          "Its result stays under refs/caesar/tasks/<id> in this clone until `caesar gc` or you delete it.",
      },
    );
  }
  if (!state.result_commit) {
    throw new CaesarError("result_gone", `Task ${id} has no result commit to ${pin ? "pin" : "unpin"}.`, {
      detail:
        state.phase === "finished"
          ? "It finished without one (see `caesar status`)."
          : `It is still ${state.phase}: pin it once it finished.`,
    });
  }
  const top = state.root;
  const remote = state.remote.git_remote;
  const failed = pin
    ? await pushKeepRef(top, remote, id, state.result_commit)
    : await deleteKeepRef(top, remote, id);
  if (failed) {
    throw new CaesarError(
      "pin_failed",
      `Could not ${pin ? "pin" : "unpin"} the result of ${id} on ${remote}.`,
      {
        detail: `${failed}\nThis clone pushes ${keepRefName(id)} there: check it can push to that remote, then retry.`,
      },
    );
  }
  return { id, pinned: pin, remote, ref: keepRefName(id), commit: state.result_commit };
}
