import type { CaesarEvent } from "../protocol/event.js";

type ToolUseEvent = Extract<CaesarEvent, { type: "tool_use" }>;

/** A tool call that has started and not yet ended. */
export interface OpenToolCall {
  key: string;
  id: string;
  tool: string;
  input: string;
  /** Milliseconds since the epoch, when the event's `at` parses. */
  startedAt: number | undefined;
}

/** A tool call that has ended, with what its start said when the end does not repeat it. */
export interface ClosedToolCall {
  tool: string;
  input: string;
  status: "succeeded" | "failed";
  /** From the event's `duration_ms`, else end minus start. */
  durationMs: number | undefined;
  exitCode: number | null | undefined;
  output: string | undefined;
  endedAt: number | undefined;
  /** Whether a start was seen for this call (opencode reports tools only once completed). */
  paired: boolean;
}

export function timeOf(at: string): number | undefined {
  const ms = Date.parse(at);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * Pairs the start and the end of each tool call, by the agent's call id. Claude's end events carry
 * only that id (an empty `tool`), so the name and input come from the start. Without an id, the pair
 * is (name, input); with neither, the most recent open call.
 */
export class ToolCallTracker {
  private readonly open = new Map<string, OpenToolCall>();

  /** Feed a tool_use event; returns the closed call for an end event. */
  record(event: ToolUseEvent): ClosedToolCall | undefined {
    const input = event.input_summary ?? "";
    if (event.status === "started") {
      const key = event.id ? `id:${event.id}` : `name:${event.tool}\u0000${input}`;
      this.open.set(key, { key, id: event.id, tool: event.tool, input, startedAt: timeOf(event.at) });
      return undefined;
    }
    const start = this.takeStart(event);
    const endedAt = timeOf(event.at);
    const measured =
      start?.startedAt !== undefined && endedAt !== undefined ? endedAt - start.startedAt : undefined;
    return {
      tool: event.tool || start?.tool || "",
      input: input || start?.input || "",
      status: event.status,
      durationMs: event.duration_ms ?? measured,
      exitCode: event.exit_code,
      output: event.output_summary,
      endedAt,
      paired: start !== undefined,
    };
  }

  /** Calls still running, oldest first. */
  running(): OpenToolCall[] {
    return [...this.open.values()];
  }

  private takeStart(event: ToolUseEvent): OpenToolCall | undefined {
    const keys = event.id
      ? [`id:${event.id}`]
      : event.tool
        ? [`name:${event.tool}\u0000${event.input_summary ?? ""}`]
        : [...this.open.keys()].slice(-1);
    for (const key of keys) {
      const start = this.open.get(key);
      if (start) {
        this.open.delete(key);
        return start;
      }
    }
    // An end with a name but a different summary than its start: the most recent open call of that name.
    if (!event.id && event.tool) {
      const candidates = [...this.open.values()].filter((call) => call.tool === event.tool && !call.id);
      const last = candidates[candidates.length - 1];
      if (last) {
        this.open.delete(last.key);
        return last;
      }
    }
    return undefined;
  }
}
