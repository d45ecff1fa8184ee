import type { CaesarEvent } from "../../protocol/event.js";
import { messageOf } from "../../support/errors.js";
import type { AttributeValue } from "../../support/telemetry/span-record.js";
import { recordSpan } from "../../support/telemetry/spans.js";
import { readEvents } from "../store/event-log.js";
import type { TaskState } from "../store/state.js";
import type { TaskPlan } from "../store/task-plan.js";
import { taskSpans } from "./task-spans.js";

/**
 * A task's spans, as its conductor sees them: the phases it times itself (the slot, isolation, setup, the
 * end of the task) as they happen, then — once the final state is written — the task's own span and what
 * its records tell (task-spans.ts). Inert when the task's plan has no telemetry; never throws and never
 * waits on a collector (support/telemetry/spans.ts).
 */
export class TaskTrace {
  constructor(
    private readonly plan: TaskPlan,
    private readonly eventsPath: string,
  ) {}

  get enabled(): boolean {
    return this.plan.telemetry !== null && this.plan.trace !== null;
  }

  /** Time `work` as a child span of the task's. */
  async phase<T>(
    name: string,
    work: () => Promise<T>,
    attributes: Record<string, AttributeValue> = {},
  ): Promise<T> {
    if (!this.enabled) return work();
    const start = Date.now();
    let error: string | undefined;
    try {
      return await work();
    } catch (caught) {
      error = messageOf(caught);
      throw caught;
    } finally {
      this.record(name, start, Date.now(), attributes, error);
    }
  }

  /** A phase already over (its times measured by the caller). */
  record(
    name: string,
    start: number,
    end: number,
    attributes: Record<string, AttributeValue> = {},
    error?: string,
  ): void {
    const { telemetry, trace } = this.plan;
    if (!telemetry || !trace) return;
    recordSpan(telemetry, {
      name,
      traceId: trace.trace_id,
      parentSpanId: trace.span_id,
      start,
      end,
      attributes,
      ...(error !== undefined ? { error } : {}),
    });
  }

  /** The task's own span and its runs, checks and tool calls, from its final state and events. */
  async finished(final: TaskState): Promise<void> {
    const { telemetry, trace } = this.plan;
    if (!telemetry || !trace || final.phase !== "finished") return;
    let events: CaesarEvent[] = [];
    try {
      events = (await readEvents(this.eventsPath)).events;
    } catch {
      // no events to tell: the task's span still goes
    }
    for (const span of taskSpans(trace, this.plan, final, events)) recordSpan(telemetry, span);
  }
}
