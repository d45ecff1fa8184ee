import * as acp from "@agentclientprotocol/sdk";
import { readAnswer } from "../engine/questions/ask.js";
import { answerQuestion } from "../engine/questions/questions.js";
import type { TaskRecord } from "../engine/store/task-store.js";
import type { CaesarEvent } from "../protocol/event.js";
import type { ToolPreview } from "../protocol/questions.js";
import type { CheckoutPaths } from "./checkout-paths.js";
import type { EditorLink } from "./editor-link.js";
import { toolCallOfPreview } from "./tool-preview.js";

export interface RelayContext {
  link: EditorLink;
  record: TaskRecord;
  context: { clientCapabilities: acp.ClientCapabilities; closed: AbortSignal };
  /** The task ended: a question still open is withdrawn from the editor. */
  ended: AbortSignal;
  /** The task's paths as the user's. */
  paths: CheckoutPaths;
}

const REJECT = /^(reject|no|deny|cancel|refuse|keep)/i;

/**
 * Ask the editor's user a question the delegated agent (or caesar's permission relay) put in the task
 * directory, and answer it there. A question with options is a `session/request_permission` with those
 * options; a free-form one is an elicitation form when the editor supports them, else a yes/no choice.
 * Anyone may answer first (`caesar answer`, another front end): the editor's answer then changes nothing.
 */
export async function relayQuestion(
  event: Extract<CaesarEvent, { type: "question" }>,
  relay: RelayContext,
): Promise<void> {
  const { link, record } = relay;
  if (relay.ended.aborted || (await readAnswer(record.dir, event.question_id))) return;
  if (event.tool) {
    await askPermission(event, event.tool, relay);
    return;
  }
  const toolCallId = `${record.id}:question:${event.question_id}`;
  await link.send({
    sessionUpdate: "tool_call",
    toolCallId,
    title: event.question,
    kind: "think",
    status: "pending",
  });
  const answer = await ask(event, relay, toolCallId).catch(() => undefined);
  let saved = false;
  if (answer !== undefined) {
    saved = await answerQuestion(record.dir, record.id, event.question_id, answer, "acp").then(
      () => true,
      // Answered meanwhile by someone else: theirs stands.
      () => false,
    );
  }
  await link.send({
    sessionUpdate: "tool_call_update",
    toolCallId,
    status: saved ? "completed" : "failed",
    content: [
      {
        type: "content",
        content: { type: "text", text: saved ? `Answered: ${answer}` : "Not answered from the editor." },
      },
    ],
  });
}

async function ask(
  event: Extract<CaesarEvent, { type: "question" }>,
  relay: RelayContext,
  toolCallId: string,
): Promise<string | undefined> {
  const { link } = relay;
  const signal = AbortSignal.any([relay.ended, relay.context.closed]);
  if (!event.options?.length && relay.context.clientCapabilities.elicitation?.form) {
    const response = await link.client.request(
      acp.methods.client.elicitation.create,
      {
        mode: "form",
        sessionId: link.sessionId,
        toolCallId,
        message: event.question,
        requestedSchema: {
          type: "object",
          properties: { answer: { type: "string", title: "Answer" } },
          required: ["answer"],
        },
      },
      { cancellationSignal: signal, stopWaitingOnCancel: true },
    );
    const value =
      response.action === "accept"
        ? (response.content as Record<string, unknown> | undefined)?.answer
        : undefined;
    return typeof value === "string" ? value : undefined;
  }
  const choices = event.options?.length ? event.options : ["Yes", "No"];
  const options: acp.PermissionOption[] = choices.map((name, index) => ({
    optionId: `option-${index}`,
    name,
    // Kinds only choose icons: "no"-like answers look like a refusal, every other one like a go-ahead.
    kind: REJECT.test(name) ? "reject_once" : "allow_once",
  }));
  const response = await link.client.request(
    acp.methods.client.session.requestPermission,
    {
      sessionId: link.sessionId,
      toolCall: { toolCallId, title: event.question, kind: "think", status: "pending" },
      options,
    },
    { cancellationSignal: signal, stopWaitingOnCancel: true },
  );
  if (response.outcome.outcome !== "selected") return undefined;
  const selected = response.outcome.optionId;
  return options.find((option) => option.optionId === selected)?.name;
}

/**
 * A delegate's permission request: the editor is asked about the delegate's tool call itself (its kind,
 * title, locations, content and diff — shown pending by the event's update), not about a question of its
 * own. The call's later updates (running, done, refused) follow under the same id.
 */
async function askPermission(
  event: Extract<CaesarEvent, { type: "question" }>,
  tool: ToolPreview,
  relay: RelayContext,
): Promise<void> {
  const { link, record } = relay;
  const choices = event.options?.length ? event.options : ["Allow", "Reject"];
  const options: acp.PermissionOption[] = choices.map((name, index) => ({
    optionId: `option-${index}`,
    name,
    kind: REJECT.test(name) ? "reject_once" : "allow_once",
  }));
  const signal = AbortSignal.any([relay.ended, relay.context.closed]);
  const response = await link.client
    .request(
      acp.methods.client.session.requestPermission,
      {
        sessionId: link.sessionId,
        toolCall: { ...toolCallOfPreview(record.id, tool, relay.paths), status: "pending" },
        options,
      },
      { cancellationSignal: signal, stopWaitingOnCancel: true },
    )
    .catch(() => undefined);
  if (response?.outcome.outcome !== "selected") return;
  const selected = response.outcome.optionId;
  const answer = options.find((option) => option.optionId === selected)?.name;
  if (answer === undefined) return;
  // Answered meanwhile by someone else: theirs stands. The answer's event moves the call on.
  await answerQuestion(record.dir, record.id, event.question_id, answer, "acp").catch(() => undefined);
}
