import type { SessionUpdate, ToolKind } from "@agentclientprotocol/sdk";
import type { CaesarEvent } from "../protocol/event.js";
import type { CheckoutPaths } from "./checkout-paths.js";
import { toolCallOfPreview } from "./tool-preview.js";

/** Kinds an editor shows an icon for, from caesar's tool names (shell, edit, read… and the CLIs' own). */
const KIND_BY_TOOL: [RegExp, ToolKind][] = [
  [/^(shell|bash|run_shell_command|exec_command|command)$/i, "execute"],
  [/^(edit|write|write_file|replace|create|apply_patch|multiedit|notebookedit)$/i, "edit"],
  [/^(read|read_file|view|cat)$/i, "read"],
  [/^(search|grep|glob|find|list|ls|rg)$/i, "search"],
  [/^(fetch|webfetch|web_fetch|web_search|websearch)$/i, "fetch"],
  [/^(delete|rm)$/i, "delete"],
  [/^(move|mv)$/i, "move"],
  [/^(think)$/i, "think"],
];

export function kindOfTool(tool: string): ToolKind {
  return KIND_BY_TOOL.find(([pattern]) => pattern.test(tool))?.[1] ?? "other";
}

/** The answers that refuse a permission (`Reject`, or a question's no-like option). */
const REJECTING = /^(reject|no|deny|cancel|refuse|keep)/i;

/** What the editor has been shown of the delegate's tool calls, so each is announced once, then updated. */
export class ShownToolCalls {
  readonly shown = new Set<string>();
  readonly ended = new Set<string>();
  /** Permission questions, by id, and the tool call each is about. */
  readonly byQuestion = new Map<string, string>();
}

const text = (value: string) => ({ type: "text" as const, text: value });

/**
 * One event of the delegated task as `session/update` notifications for the editor: tools become tool
 * calls (ids prefixed by the task's, so two tasks never collide), messages and thoughts stream as chunks,
 * changed files become follow-along locations. A permission question shows the delegate's tool call itself
 * (pending, with its diff) before the prompt turn asks about it; `shown` holds the tool calls the editor
 * already has, so a call is announced once and then updated. Paths are the user's (`paths`), not the
 * worktree's. Answers and the end are the turn's business.
 */
export function updatesForEvent(
  event: CaesarEvent,
  paths: CheckoutPaths,
  calls: ShownToolCalls = new ShownToolCalls(),
): SessionUpdate[] {
  const { shown } = calls;
  const id = (suffix: string) => `${event.task_id}:${suffix}`;
  switch (event.type) {
    case "started":
      return [
        {
          sessionUpdate: "agent_thought_chunk",
          content: text(`${event.agent} started: ${event.command ?? ""}\n`),
        },
      ];
    case "tool_use": {
      const toolCallId = id(event.id || `seq${event.seq}`);
      if (event.status === "started") {
        // Already shown with its permission request: it runs now, keeping the delegate's title and diff.
        if (shown.has(toolCallId))
          return [{ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" }];
        shown.add(toolCallId);
        return [
          {
            sessionUpdate: "tool_call",
            toolCallId,
            title: paths.text(
              event.input_summary ? `${event.tool}: ${event.input_summary}` : event.tool || "tool",
            ),
            kind: kindOfTool(event.tool),
            status: "in_progress",
            rawInput: { tool: event.tool, summary: paths.text(event.input_summary ?? "") },
          },
        ];
      }
      calls.ended.add(toolCallId);
      return [
        {
          sessionUpdate: "tool_call_update",
          toolCallId,
          status: event.status === "succeeded" ? "completed" : "failed",
          ...(event.output_summary
            ? { content: [{ type: "content" as const, content: text(paths.text(event.output_summary)) }] }
            : {}),
        },
      ];
    }
    case "file_changed": {
      const path = paths.file(event.path);
      return [
        {
          sessionUpdate: "tool_call",
          toolCallId: id(`file${event.seq}`),
          title: `${event.action ?? "changed"} ${event.path}`,
          kind: "edit",
          status: "completed",
          locations: [{ path }],
        },
      ];
    }
    case "message":
      if (event.role && event.role !== "assistant") return [];
      return [
        {
          sessionUpdate: "agent_message_chunk",
          messageId: id(`m${event.seq}`),
          content: text(`${paths.text(event.text)}\n\n`),
        },
      ];
    case "thinking":
      return [{ sessionUpdate: "agent_thought_chunk", content: text(`${paths.text(event.text)}\n`) }];
    case "progress": {
      // A running tool's output so far: the tool call's content, replaced as it grows.
      if (event.output) {
        const toolCallId = id(event.output.tool_id);
        if (!shown.has(toolCallId) || calls.ended.has(toolCallId)) return [];
        return [
          {
            sessionUpdate: "tool_call_update",
            toolCallId,
            status: "in_progress",
            content: [{ type: "content", content: text(paths.text(event.output.text)) }],
          },
        ];
      }
      // A plan is the prompt turn's plan update, a usage its usage update: not text.
      if (event.plan || event.usage) return [];
      return [
        {
          sessionUpdate: "agent_thought_chunk",
          content: text(`${event.pct !== undefined ? `[${event.pct}%] ` : ""}${paths.text(event.message)}\n`),
        },
      ];
    }
    case "question": {
      if (!event.tool) return [];
      const call = toolCallOfPreview(event.task_id, event.tool, paths);
      const known = shown.has(call.toolCallId);
      shown.add(call.toolCallId);
      calls.byQuestion.set(event.question_id, call.toolCallId);
      return [
        known
          ? { sessionUpdate: "tool_call_update", ...call, status: "pending" }
          : { sessionUpdate: "tool_call", ...call, status: "pending" },
      ];
    }
    case "answer": {
      const thought: SessionUpdate = {
        sessionUpdate: "agent_thought_chunk",
        content: text(`Answered ${event.question_id}: ${event.answer}\n`),
      };
      // A permission granted (by whoever answered): the call runs now, unless it already ended.
      const toolCallId = calls.byQuestion.get(event.question_id);
      if (!toolCallId || calls.ended.has(toolCallId) || REJECTING.test(event.answer)) return [thought];
      return [thought, { sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" }];
    }
    case "error":
      return [
        {
          sessionUpdate: "agent_message_chunk",
          messageId: id(`e${event.seq}`),
          content: text(`Error${event.code ? ` (${event.code})` : ""}: ${paths.text(event.message)}\n\n`),
        },
      ];
    default:
      return [];
  }
}
