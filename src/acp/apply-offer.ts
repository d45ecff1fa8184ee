import * as acp from "@agentclientprotocol/sdk";
import { applyTask } from "../engine/lifecycle/apply-task.js";
import { loadLiveTask } from "../engine/lifecycle/live-task.js";
import type { TaskPlan } from "../engine/lifecycle/plan.js";
import type { TaskState } from "../engine/store/state.js";
import { describeError } from "../support/errors.js";
import type { EditorLink } from "./editor-link.js";
import { verifiedDiff } from "./verified-diff.js";

/**
 * Show the task's change as git verified it, then offer it to the user with `caesar apply` semantics: a
 * three-way merge staged in their checkout, refused (and nothing changed) over their uncommitted work.
 * Returns one sentence for the final answer saying what became of the change.
 */
export async function offerChange(
  state: TaskState,
  plan: TaskPlan,
  link: EditorLink,
  context: { root: string; closed: AbortSignal; cancelled?: AbortSignal },
): Promise<string> {
  if (!state.worktree) {
    return state.report?.changes.length
      ? `It ran in place: its changes are already in your working tree (\`caesar diff ${state.id}\`).`
      : "No file changed.";
  }
  let diff: Awaited<ReturnType<typeof verifiedDiff>>;
  try {
    diff = await verifiedDiff(state, plan.repo_top);
  } catch (error) {
    return `Its change could not be read: ${describeError(error)}`;
  }
  if (diff.files.length === 0) return "No file changed.";
  const top = plan.repo_top ?? plan.root;
  const locations = diff.files.map((path) => ({ path: `${top}/${path}` }));
  await link.send({
    sessionUpdate: "tool_call",
    toolCallId: `${state.id}:diff`,
    title: `Changes verified by git: ${diff.files.length} file(s)`,
    kind: "edit",
    status: "completed",
    content: diff.content,
    locations,
  });
  const kept = `It stays in its worktree: \`caesar diff ${state.id}\` to review, \`caesar apply ${state.id}\` to take it.`;
  if (state.outcome !== "succeeded" || state.report?.status === "failed")
    return `Not offered: the task ${state.outcome}. ${kept}`;
  const toolCallId = `${state.id}:apply`;
  const title = `Apply ${diff.files.length} file(s) from ${state.id} to your working tree`;
  await link.send({
    sessionUpdate: "tool_call",
    toolCallId,
    title,
    kind: "edit",
    status: "pending",
    locations,
  });
  await link.flush();
  let response: acp.RequestPermissionResponse;
  try {
    response = await link.client.request(
      acp.methods.client.session.requestPermission,
      {
        sessionId: link.sessionId,
        toolCall: { toolCallId, title, kind: "edit", status: "pending", locations },
        options: [
          { optionId: "apply", name: "Apply to my working tree (staged)", kind: "allow_once" },
          { optionId: "keep", name: "Keep it in its worktree", kind: "reject_once" },
        ],
      },
      // A cancel from the editor withdraws the offer too: the change stays in its worktree.
      {
        cancellationSignal: AbortSignal.any([
          context.closed,
          ...(context.cancelled ? [context.cancelled] : []),
        ]),
        stopWaitingOnCancel: true,
      },
    );
  } catch {
    return kept;
  }
  if (response.outcome.outcome !== "selected" || response.outcome.optionId !== "apply") {
    await link.send({ sessionUpdate: "tool_call_update", toolCallId, status: "failed" });
    return kept;
  }
  try {
    const record = await loadLiveTask(context.root, state.id, "acp");
    const applied = await applyTask(record, { by: "acp" });
    await link.send({ sessionUpdate: "tool_call_update", toolCallId, status: "completed" });
    return `Applied: ${applied.files.length} file(s) staged in ${applied.top}. Review with \`git diff --cached\`, then commit.`;
  } catch (error) {
    await link.send({
      sessionUpdate: "tool_call_update",
      toolCallId,
      status: "failed",
      content: [{ type: "content", content: { type: "text", text: describeError(error) } }],
    });
    return `Not applied: ${describeError(error)} ${kept}`;
  }
}
