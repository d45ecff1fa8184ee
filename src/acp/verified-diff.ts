import { join } from "node:path";
import type { ToolCallContent } from "@agentclientprotocol/sdk";
import { taskResult } from "../engine/lifecycle/result.js";
import type { TaskState } from "../engine/store/state.js";
import { git } from "../workspace/git.js";

/** Largest file shown whole in the editor's diff; larger and binary files are named, not shown. */
const MAX_SHOWN_BYTES = 256 * 1024;

export interface VerifiedDiff {
  /** Diffs against the user's checkout (absolute paths where `caesar apply` would write). */
  content: ToolCallContent[];
  files: string[];
}

/**
 * The task's change as git observes it (from the tree it started from to its result), as ACP diff
 * content an editor can show and review: old and new text per file, paths in the user's checkout.
 */
export async function verifiedDiff(state: TaskState, repoTop: string | null): Promise<VerifiedDiff> {
  const result = await taskResult(state, repoTop);
  const checkout = repoTop ?? state.root;
  const content: ToolCallContent[] = [];
  for (const change of result.changes) {
    const path = join(checkout, change.path);
    const oldText = change.action === "added" ? null : await textAt(result.top, result.from, change.path);
    const newText = change.action === "deleted" ? "" : await textAt(result.top, result.to, change.path);
    if (oldText === undefined || newText === undefined) {
      content.push({
        type: "content",
        content: {
          type: "text",
          text: `${change.action} ${change.path} (binary or larger than ${MAX_SHOWN_BYTES} bytes: see \`caesar diff ${state.id}\`)`,
        },
      });
      continue;
    }
    content.push({ type: "diff", path, oldText, newText });
  }
  return { content, files: result.changes.map((change) => change.path) };
}

/** A file's text at a tree; undefined when it is binary or too large to show. */
async function textAt(top: string, tree: string, path: string): Promise<string | undefined> {
  const size = await git(top, ["cat-file", "-s", `${tree}:${path}`], { allowFailure: true });
  if (size.code !== 0 || Number(size.stdout.trim()) > MAX_SHOWN_BYTES) return undefined;
  const shown = await git(top, ["cat-file", "blob", `${tree}:${path}`], { allowFailure: true });
  if (shown.code !== 0 || shown.stdout.includes("\0")) return undefined;
  return shown.stdout;
}
