import type { CaesarEvent } from "../../protocol/event.js";
import { type ClosedToolCall, ToolCallTracker, timeOf } from "../tool-calls.js";

/** A question asked through an event or a `questions/<id>.json` file. */
export interface AskedQuestion {
  id: string;
  question: string;
  options?: string[] | undefined;
  askedAt: number | undefined;
}

/**
 * What a watcher needs to know of a task's event stream, folded event by event: when the last event
 * came, the tools running now, the last thing said, the last tool that ended, the questions asked
 * and answered.
 */
export class TaskActivity {
  readonly tools = new ToolCallTracker();
  lastEventAt: number | undefined;
  eventCount = 0;
  lastMessage: { text: string; at: number | undefined } | undefined;
  lastTool: ClosedToolCall | undefined;
  readonly questions = new Map<string, AskedQuestion>();
  readonly answered = new Set<string>();
  finished: Extract<CaesarEvent, { type: "finished" }> | undefined;

  fold(event: CaesarEvent): void {
    const at = timeOf(event.at);
    this.eventCount += 1;
    if (at !== undefined) this.lastEventAt = Math.max(this.lastEventAt ?? at, at);
    switch (event.type) {
      case "message":
        if (event.text.trim()) this.lastMessage = { text: event.text, at };
        break;
      case "tool_use": {
        const closed = this.tools.record(event);
        if (closed) this.lastTool = closed;
        break;
      }
      case "question":
        this.questions.set(event.question_id, {
          id: event.question_id,
          question: event.question,
          options: event.options,
          askedAt: at,
        });
        break;
      case "answer":
        this.answered.add(event.question_id);
        break;
      case "finished":
        // The task's end only: an agent's own `finished` (by: agent) is its word, not the end.
        if (event.by !== "agent") this.finished = event;
        break;
      default:
        break;
    }
  }
}
