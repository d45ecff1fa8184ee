import type * as acp from "@agentclientprotocol/sdk";
import { applyTask } from "../engine/lifecycle/apply-task.js";
import { cancelTask } from "../engine/lifecycle/cancel.js";
import { loadLiveTask, readPlan } from "../engine/lifecycle/live-task.js";
import { readState } from "../engine/store/task-store.js";
import { describeError } from "../support/errors.js";
import type { EditorLink } from "./editor-link.js";
import { verifiedDiff } from "./verified-diff.js";

/** The commands an editor offers after `/`; each acts on the session's tasks, none starts one. */
export const SLASH_COMMANDS: acp.AvailableCommand[] = [
  {
    name: "status",
    description: "The session's tasks: phase, outcome, summary",
  },
  {
    name: "diff",
    description: "The change of the session's last task (or of the task named), as git verified it",
    input: { hint: "task id (default: the last)" },
  },
  {
    name: "apply",
    description: "Apply the last task's change (or the named task's) to your working tree, staged",
    input: { hint: "task id (default: the last)" },
  },
  {
    name: "cancel",
    description: "Cancel the task under way (or the last one, if it still runs)",
  },
];

export interface CommandSession {
  root: string;
  /** The session's tasks, oldest first. */
  tasks: string[];
  /** The prompt turn under way, to cancel. */
  turn?: AbortController;
}

/** `/name rest` when the prompt's text is one of caesar's commands; undefined for any other prompt. */
export function parseSlashCommand(prompt: acp.ContentBlock[]): { name: string; input: string } | undefined {
  const text = prompt
    .map((block) => (block.type === "text" ? block.text : ""))
    .join("")
    .trim();
  const match = /^\/([a-z]+)(?:\s+([\s\S]*))?$/.exec(text);
  if (!match || !SLASH_COMMANDS.some((command) => command.name === match[1])) return undefined;
  return { name: match[1]!, input: (match[2] ?? "").trim() };
}

/** Run one command and say what came of it in the session. */
export async function runSlashCommand(
  command: { name: string; input: string },
  session: CommandSession,
  link: EditorLink,
): Promise<void> {
  try {
    await link.say(await answer(command, session, link));
  } catch (error) {
    await link.say(`/${command.name}: ${describeError(error)}`);
  }
  await link.flush();
}

async function answer(
  command: { name: string; input: string },
  session: CommandSession,
  link: EditorLink,
): Promise<string> {
  if (command.name === "cancel") return cancel(session);
  if (command.name === "status") return status(session);
  const id = command.input || session.tasks.at(-1);
  if (!id) return "No task yet in this session.";
  const record = await loadLiveTask(session.root, id, "acp");
  if (command.name === "apply") {
    const applied = await applyTask(record, { by: "acp" });
    return `Applied ${record.id}: ${applied.files.length} file(s) staged in ${applied.top}. Review with \`git diff --cached\`, then commit.`;
  }
  const state = await readState(record.dir);
  if (!state.worktree) return `${record.id} ran in place: \`git diff\` shows its changes.`;
  const plan = await readPlan(record.dir);
  const diff = await verifiedDiff(state, plan?.repo_top ?? null);
  if (diff.files.length === 0) return `${record.id} changed no file.`;
  await link.send({
    sessionUpdate: "tool_call",
    toolCallId: `${record.id}:diff:${Date.now()}`,
    title: `Changes of ${record.id} verified by git: ${diff.files.length} file(s)`,
    kind: "edit",
    status: "completed",
    content: diff.content,
  });
  return `${record.id}: ${diff.files.length} file(s) changed (${diff.files.join(", ")}).`;
}

async function status(session: CommandSession): Promise<string> {
  if (session.tasks.length === 0) return "No task yet in this session.";
  const lines: string[] = [];
  for (const id of session.tasks.slice(-10)) {
    const state = await readState((await loadLiveTask(session.root, id, "acp")).dir);
    const summary = state.report?.summary ?? state.error?.message ?? "";
    lines.push(
      `- ${id}: ${state.phase}${state.outcome ? ` (${state.outcome})` : ""}, ${state.agent}, ${state.mode}${summary ? ` — ${summary}` : ""}`,
    );
  }
  return lines.join("\n");
}

async function cancel(session: CommandSession): Promise<string> {
  if (session.turn) {
    session.turn.abort();
    return "Cancelling the task under way.";
  }
  const id = session.tasks.at(-1);
  if (!id) return "No task to cancel.";
  const record = await loadLiveTask(session.root, id, "acp");
  if ((await readState(record.dir)).phase === "finished") return `${id} has already finished.`;
  await cancelTask(record, "acp");
  return `Cancelled ${id}.`;
}
