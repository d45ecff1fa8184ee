import type { EventBody } from "../protocol/event.js";
import { clip, summarizeOutput } from "./tool-summary.js";

interface OpenTool {
  tool: string;
  input: string;
  startedAt: number;
}

export interface ToolEnd {
  ok: boolean;
  /** The tool's name when the end event carries it (claude's does not: the tracker remembers). */
  tool?: string;
  input?: string;
  output?: unknown;
  exitCode?: number | null;
}

/**
 * Pairs tool starts and ends by the agent's call id, so every `started` gets exactly one
 * `succeeded`/`failed`, even when the stream repeats itself, ends a call it never started (the end then
 * comes with its start), or dies with calls still running (closed as failed at the end).
 */
export class ToolTracker {
  private readonly open = new Map<string, OpenTool>();
  private readonly ended = new Set<string>();
  private anonymous = 0;

  constructor(private readonly now: () => number = Date.now) {}

  start(id: string | undefined, tool: string, input: string): EventBody[] {
    const key = id || `anon-${++this.anonymous}`;
    if (this.open.has(key) || this.ended.has(key)) return [];
    this.open.set(key, { tool, input, startedAt: this.now() });
    return [{ type: "tool_use", tool, id: key, input_summary: clip(input), status: "started" }];
  }

  end(id: string | undefined, end: ToolEnd): EventBody[] {
    const key = id || "";
    if (key && this.ended.has(key)) return [];
    const events: EventBody[] = [];
    let open = key ? this.open.get(key) : undefined;
    if (!open) {
      // An end without a start (a CLI that reports only finished tools): start it now, end it at once.
      events.push(...this.start(id, end.tool ?? "", end.input ?? ""));
      open = this.open.get(key || `anon-${this.anonymous}`);
    }
    const resolvedKey = key || `anon-${this.anonymous}`;
    this.open.delete(resolvedKey);
    this.ended.add(resolvedKey);
    const output = summarizeOutput(end.output);
    events.push({
      type: "tool_use",
      tool: end.tool || open?.tool || "",
      id: resolvedKey,
      input_summary: clip(end.input ?? open?.input ?? ""),
      status: end.ok ? "succeeded" : "failed",
      ...(output ? { output_summary: output } : {}),
      ...(end.exitCode !== undefined ? { exit_code: end.exitCode } : {}),
      ...(open ? { duration_ms: Math.max(0, this.now() - open.startedAt) } : {}),
    });
    return events;
  }

  isOpen(id: string): boolean {
    return this.open.has(id);
  }

  /** Tools still running when the stream ended: closed as failed with the reason. */
  closeAll(reason: string): EventBody[] {
    const events: EventBody[] = [];
    for (const id of [...this.open.keys()]) events.push(...this.end(id, { ok: false, output: reason }));
    return events;
  }
}
