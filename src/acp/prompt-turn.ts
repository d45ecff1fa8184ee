import type * as acp from "@agentclientprotocol/sdk";
import type { AgentAdapter } from "../agents/adapter.js";
import { followTask } from "../engine/follow/follow.js";
import { governed, identifyCaller } from "../engine/lifecycle/caller.js";
import { cancelTask } from "../engine/lifecycle/cancel.js";
import { describeRequest, resolvePlan, type TaskPlan } from "../engine/lifecycle/plan.js";
import { type DelegationRequest, parseDelegationRequest, wireSpelling } from "../engine/lifecycle/request.js";
import { startTask } from "../engine/lifecycle/start.js";
import type { TaskState } from "../engine/store/state.js";
import type { TaskRecord } from "../engine/store/task-store.js";
import type { ContextUsage, PlanStep } from "../protocol/event.js";
import type { McpServer } from "../protocol/mcp-server.js";
import type { PromptImage } from "../protocol/prompt-image.js";
import { describeError } from "../support/errors.js";
import { offerChange } from "./apply-offer.js";
import { CheckoutPaths } from "./checkout-paths.js";
import { makeEditorLink } from "./editor-link.js";
import { mcpNotice } from "./editor-mcp.js";
import { ShownToolCalls, updatesForEvent } from "./event-updates.js";
import { relayQuestion } from "./question-relay.js";
import type { Delegate, SessionMode } from "./session-options.js";

export interface TurnContext {
  root: string;
  env: NodeJS.ProcessEnv;
  sessionId: string;
  delegate: Delegate;
  mode: SessionMode;
  /** The model chosen in the session, if any (else the role's, `[models]`' or the agent's). */
  model?: string;
  client: acp.AgentContext;
  /** The task was created (the session's commands act on it from now on). */
  started?: (taskId: string) => void;
  clientCapabilities: acp.ClientCapabilities;
  /** Aborted by `session/cancel`: the task is cancelled. */
  cancelled: AbortSignal;
  /** Aborted when the editor goes away: stop following; the task keeps running. */
  closed: AbortSignal;
  /** The previous task of this session, so a follow-up prompt knows what came before. */
  previous?: { id: string; summary: string };
  /** What the session's earlier tasks cost, in USD (ACP's usage_update gives the session's cost). */
  costSoFar?: number;
  /** The editor's MCP servers, passed on to a delegate that takes them (in write mode). */
  mcpServers?: McpServer[];
}

export interface TurnResult {
  stopReason: acp.StopReason;
  task?: { id: string; summary: string };
  /** What the task cost, in USD, when its report says. */
  costUsd?: number;
}

/**
 * One prompt from the editor: a task delegated to the session's agent (or role), followed until it ends —
 * its tools, messages and plan streamed as `session/update`, its questions and permission requests asked
 * of the editor's user — then the verified diff, the report as the answer, and the change offered for the
 * user to apply.
 */
export async function runPromptTurn(prompt: acp.ContentBlock[], context: TurnContext): Promise<TurnResult> {
  const link = makeEditorLink(context.client, context.sessionId);
  let plan: TaskPlan;
  let record: TaskRecord;
  let adapter: AgentAdapter;
  try {
    // An editor's user, or — when an agent inside a task started `caesar acp` — that task, proven by its
    // credentials: a nested request like any other.
    const request = requestFor(prompt, context);
    const action = describeRequest(request);
    const caller = await identifyCaller(context.root, { env: context.env, action });
    ({ plan, record, adapter } = await governed(caller, action, async () => {
      const resolved = await resolvePlan(request, { root: context.root, env: context.env, caller });
      return { plan: resolved.plan, adapter: resolved.adapter, record: await startTask(resolved.plan) };
    }));
  } catch (error) {
    await link.say(`caesar refused the task: ${describeError(error)}`);
    return { stopReason: "end_turn" };
  }
  context.started?.(record.id);
  const steps = planSteps(plan, record.id);
  await link.send({ sessionUpdate: "plan", entries: steps.entries("running") });
  const mcp = mcpNotice(context.mcpServers ?? [], plan.mcp_servers, plan, adapter);
  await link.say(
    `Delegated to ${plan.agent} as ${record.id} (${plan.mode}, ${plan.isolation}). In a terminal: \`caesar logs ${record.id} --follow\`.${mcp ? ` ${mcp}` : ""}`,
  );

  const onCancel = () => void cancelTask(record, "acp").catch(() => undefined);
  context.cancelled.addEventListener("abort", onCancel, { once: true });
  // A cancel that came while the task was being started has no event left to fire.
  if (context.cancelled.aborted) onCancel();
  // Questions are asked one at a time, in order; those still open when the task ends are withdrawn.
  const ended = new AbortController();
  let relays: Promise<void> = Promise.resolve();
  // The delegate's paths, shown as the user's checkout's: where its change lands once applied.
  const top = plan.repo_top ?? plan.root;
  const paths = new CheckoutPaths({ workspace: plan.root, worktree: null, top });
  // The tool calls the editor has been shown, so that each is announced once.
  const shown = new ShownToolCalls();
  let usage: ContextUsage | undefined;
  let usageSent: acp.SessionUpdate | undefined;
  let final: TaskState;
  try {
    final = await followTask(
      record.id,
      record.dir,
      {
        onState: (state) => {
          paths.update({ workspace: state.workspace, worktree: state.worktree, top });
        },
        onEvent: (event) => {
          for (const update of updatesForEvent(event, paths, shown)) void link.send(update);
          // The delegate's own plan becomes part of the turn's: ACP has one plan, each update whole.
          if (event.type === "progress" && event.plan) {
            steps.setDelegatePlan(event.plan);
            void link.send({ sessionUpdate: "plan", entries: steps.entries("running") });
          }
          // The delegate's context and cost, as it states them: the session's usage update.
          if (event.type === "progress" && event.usage) {
            usage = event.usage;
            usageSent = usageUpdate(usage, context.costSoFar);
            void link.send(usageSent);
          }
          if (event.type === "question") {
            relays = relays
              .then(() => relayQuestion(event, { link, record, context, ended: ended.signal, paths }))
              .catch(() => undefined);
          }
        },
      },
      context.closed,
    );
  } finally {
    ended.abort();
    context.cancelled.removeEventListener("abort", onCancel);
  }
  if (context.closed.aborted) return { stopReason: "end_turn" };
  await link.flush();

  const report = final.report;
  const summary = report?.summary ?? final.error?.message ?? "The task ended without a report.";
  const costUsd = report?.usage.cost_usd;
  // The last word on what the task cost is its report's.
  if (usage) {
    const last = usageUpdate(
      { ...usage, ...(costUsd !== undefined ? { cost_usd: costUsd } : {}) },
      context.costSoFar,
    );
    if (JSON.stringify(last) !== JSON.stringify(usageSent)) await link.send(last);
  }
  await link.send({ sessionUpdate: "plan", entries: steps.entries("verifying") });
  const offered = await offerChange(final, plan, link, context);
  await link.send({ sessionUpdate: "plan", entries: steps.entries("done") });
  await link.say(finalAnswer(final, offered));
  await link.flush();
  // Cancelled by the editor, whenever it came (while the change was offered too): ACP says `cancelled`.
  const stopReason = context.cancelled.aborted ? "cancelled" : "end_turn";
  return { stopReason, task: { id: record.id, summary }, ...(costUsd !== undefined ? { costUsd } : {}) };
}

/**
 * ACP's codec of the delegation request: the prompt's text is the objective, the files it references (and
 * the session's previous task) the context; then the request's one parse, as on every other surface — a
 * prompt with a control character, or too long, is refused with the same words.
 */
function requestFor(prompt: acp.ContentBlock[], context: TurnContext): DelegationRequest {
  const texts: string[] = [];
  const references: string[] = [];
  const images: PromptImage[] = [];
  for (const block of prompt) {
    if (block.type === "text") texts.push(block.text);
    else if (block.type === "image")
      // Checked by the request's parse (a type it knows, base64, a size); an image only by URI is refused.
      images.push({ mime_type: block.mimeType as PromptImage["mime_type"], data: block.data });
    else if (block.type === "resource_link") references.push(`- ${block.uri}`);
    else if (block.type === "resource" && "text" in block.resource) {
      // A file's text is quoted, not the user's words (nor is a report's summary, below): its control
      // characters are shown, not refused.
      references.push(
        `File ${block.resource.uri}:\n${showControls(block.resource.text.slice(0, 64 * 1024))}`,
      );
    }
  }
  const contextParts = [
    ...(context.previous
      ? [
          `This follows task ${context.previous.id} of the same session: ${showControls(context.previous.summary)}`,
        ]
      : []),
    ...(references.length > 0 ? ["Referenced by the user:", ...references] : []),
  ];
  const delegate = context.delegate;
  return parseDelegationRequest(
    {
      objective: texts.join("\n").trim(),
      ...("agent" in delegate ? { agent: delegate.agent } : {}),
      ...("role" in delegate ? { role: delegate.role } : {}),
      ...(context.mode !== "default" ? { mode: context.mode } : {}),
      ...(context.model ? { model: context.model } : {}),
      ...(contextParts.length > 0 ? { context: contextParts.join("\n\n") } : {}),
      ...(context.mcpServers?.length ? { mcp_servers: context.mcpServers } : {}),
      ...(images.length > 0 ? { images } : {}),
      // The return channel lets the agent ask questions, which the editor's user answers.
      channel: true,
      ask_permissions: true,
      // The editor's agent runs here: its permission requests and its questions reach the editor's user.
      on: "local",
      requested_by: "acp",
    },
    {
      spell: (path) =>
        path[0] === "objective"
          ? "the prompt"
          : path[0] === "images"
            ? `the prompt's image ${Number(path[1] ?? 0) + 1}`
            : path[0] === "context"
              ? "the referenced files"
              : wireSpelling(path),
    },
  );
}

/** Control characters (but tab and line breaks) written out as `\u001b`, so quoted text stays text. */
function showControls(text: string): string {
  return text.replace(
    /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g,
    (char) => `\\u${char.codePointAt(0)!.toString(16).padStart(4, "0")}`,
  );
}

/**
 * caesar's own plan for the turn: run the agent, verify with git, offer the change — with the delegate's
 * plan, once it states one, as the steps of the first (each named after the agent).
 */
function planSteps(plan: TaskPlan, taskId: string) {
  const names = [
    `Run ${plan.agent} on ${taskId} (${plan.mode}, ${plan.isolation})`,
    "Verify the change against git",
    "Offer the change for you to apply",
  ];
  const order = ["running", "verifying", "done"] as const;
  let delegate: PlanStep[] = [];
  return {
    setDelegatePlan(steps: PlanStep[]): void {
      delegate = steps;
    },
    entries(phase: (typeof order)[number]): acp.PlanEntry[] {
      const at = order.indexOf(phase);
      const own = names.map(
        (content, index): acp.PlanEntry => ({
          content,
          priority: "medium",
          status: index < at || phase === "done" ? "completed" : index === at ? "in_progress" : "pending",
        }),
      );
      const delegated = delegate.map(
        (step): acp.PlanEntry => ({
          content: `${plan.agent}: ${step.content}`,
          priority: "medium",
          status: step.status,
        }),
      );
      return [own[0]!, ...delegated, ...own.slice(1)];
    },
  };
}

function finalAnswer(state: TaskState, offered: string): string {
  const report = state.report;
  if (!report) return `${state.id} ${state.outcome ?? "ended"} without a report. ${offered}`;
  const lines = [
    `**${state.id}: ${report.status}** (${state.outcome ?? "?"}, report from ${report.report_source ?? "?"})`,
    "",
    report.summary,
  ];
  if (report.details) lines.push("", report.details);
  const findings = report.findings.filter((finding) => finding.severity !== "low");
  if (findings.length > 0) {
    lines.push("", "Findings:", ...findings.map((finding) => `- ${finding.severity}: ${finding.title}`));
  }
  if (report.next_steps.length > 0)
    lines.push("", "Next steps:", ...report.next_steps.map((step) => `- ${step}`));
  const usage = usageLine(report.usage);
  if (usage) lines.push("", usage);
  lines.push("", offered);
  return lines.join("\n");
}

/**
 * What the task spent, as its report says: ACP's `usage_update` wants the context window's size, which
 * caesar does not know of a delegate, so the tokens and cost are told in the answer.
 */
function usageLine(usage: NonNullable<TaskState["report"]>["usage"]): string | undefined {
  const parts: string[] = [];
  if (usage.input_tokens !== undefined || usage.output_tokens !== undefined)
    parts.push(`${usage.input_tokens ?? 0} input / ${usage.output_tokens ?? 0} output tokens`);
  if (usage.cost_usd !== undefined) parts.push(`$${usage.cost_usd.toFixed(4)}`);
  if (usage.duration_ms !== undefined) parts.push(`${Math.round(usage.duration_ms / 1000)} s`);
  return parts.length > 0 ? `Usage: ${parts.join(", ")}.` : undefined;
}

/**
 * ACP's `usage_update` from what the delegate stated: the tokens in its context and its window's size
 * (only a delegate knows its model's; caesar never guesses one), and the session's cost — its earlier
 * tasks' and this one's so far.
 */
function usageUpdate(usage: ContextUsage, costSoFar = 0): acp.SessionUpdate {
  const cost =
    usage.cost_usd !== undefined ? costSoFar + usage.cost_usd : costSoFar > 0 ? costSoFar : undefined;
  return {
    sessionUpdate: "usage_update",
    used: usage.used_tokens,
    size: usage.window_tokens,
    ...(cost !== undefined ? { cost: { amount: cost, currency: "USD" } } : {}),
  };
}
