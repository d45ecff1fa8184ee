import type { CaesarEvent } from "../../protocol/event.js";
import { randomHex } from "../../support/random.js";
import type { AttributeValue, SpanRecord } from "../../support/telemetry/span-record.js";
import type { TraceContext } from "../../support/telemetry/trace-context.js";
import type { TaskState } from "../store/state.js";
import type { TaskPlan } from "../store/task-plan.js";

/** At most this many of an agent's tool calls become spans (a long run makes thousands). */
const MAX_TOOL_SPANS = 500;
/** At most this many changed paths in `caesar.changes.paths`. */
const MAX_PATHS = 100;

/** The provider behind an agent CLI, as GenAI's `gen_ai.provider.name` spells it (unknown: left out). */
const PROVIDERS: Record<string, string> = {
  claude: "anthropic",
  codex: "openai",
  gemini: "gcp.gemini",
  copilot: "github",
};

/**
 * The spans told by a finished task's records: the task itself (`invoke_agent`, after the OpenTelemetry
 * GenAI conventions), one span per run of its agent with the checks after it, and the agent's tool calls
 * (`execute_tool`) under the run they happened in. Built from the final state and events.jsonl, so
 * whichever process ends the task tells the same story, even after taking it over.
 */
export function taskSpans(
  context: TraceContext,
  plan: TaskPlan,
  final: TaskState,
  events: readonly CaesarEvent[],
): SpanRecord[] {
  const report = final.report;
  const start = Date.parse(final.created_at);
  const end = final.finished_at ? Date.parse(final.finished_at) : Date.now();
  const failed =
    final.report_status === "failed" || final.outcome === "failed" || final.outcome === "timed_out";
  const usage = report?.usage ?? {};
  const changes = report?.changes ?? [];
  const task: SpanRecord = {
    name: `invoke_agent ${plan.agent}`,
    traceId: context.trace_id,
    spanId: context.span_id,
    parentSpanId: context.parent_span_id,
    start,
    end,
    attributes: {
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": plan.agent,
      "gen_ai.agent.id": final.id,
      "gen_ai.agent.description": firstLine(plan.objective),
      "gen_ai.provider.name": PROVIDERS[plan.agent],
      "gen_ai.request.model": plan.model,
      "gen_ai.conversation.id": report?.attempts.at(-1)?.session,
      "gen_ai.usage.input_tokens": usage.input_tokens,
      "gen_ai.usage.output_tokens": usage.output_tokens,
      "caesar.cost_usd": usage.cost_usd,
      "caesar.task.id": final.id,
      "caesar.task.parent_id": plan.parent_id,
      "caesar.task.depth": plan.depth,
      "caesar.task.kind": plan.kind,
      "caesar.task.role": plan.role,
      "caesar.task.mode": plan.mode,
      "caesar.task.isolation": final.isolation,
      "caesar.task.outcome": final.outcome,
      "caesar.task.change_number": final.change_number,
      "caesar.task.remote": plan.remote !== null,
      "caesar.report.status": final.report_status,
      "caesar.report.source": report?.report_source,
      "caesar.changes.verified_by": report?.changes_verified_by,
      "caesar.changes.count": changes.length,
      "caesar.changes.paths": changes.slice(0, MAX_PATHS).map((change) => change.path),
      "caesar.result_commit": final.result_commit,
      "caesar.checks.total": report?.checks.length,
      "caesar.checks.passed": report?.checks.filter((check) => check.passed).length,
      "caesar.attempts": report?.attempts.length,
      "caesar.findings.count": report?.findings.length,
      "error.type": failed ? (final.error?.code ?? final.outcome ?? "failed") : undefined,
    },
    events: (report?.findings ?? []).map((finding) => ({
      name: "caesar.finding",
      at: end,
      attributes: {
        "caesar.finding.severity": finding.severity,
        "caesar.finding.title": finding.title,
        "caesar.finding.file": finding.file,
      },
    })),
    ...(failed ? { error: final.error?.message ?? report?.summary ?? "the task failed" } : {}),
  };
  const runs = (report?.attempts ?? []).map((attempt) => ({ attempt, spanId: randomHex(8) }));
  const checkEnds = new Map(
    events.flatMap((event) =>
      event.type === "tool_use" && isCheckEvent(event) && event.status !== "started"
        ? [[event.id, Date.parse(event.at)] as const]
        : [],
    ),
  );
  const spans: SpanRecord[] = [task];
  for (const { attempt, spanId } of runs) {
    const runStart = Date.parse(attempt.started_at);
    const runEnd = Date.parse(attempt.finished_at);
    spans.push({
      name: "caesar.attempt",
      traceId: context.trace_id,
      spanId,
      parentSpanId: context.span_id,
      start: runStart,
      end: runEnd,
      attributes: {
        "caesar.attempt": attempt.attempt,
        "caesar.attempt.how": attempt.how,
        "caesar.attempt.outcome": attempt.outcome,
        "caesar.attempt.exit_code": attempt.exit_code,
        "caesar.attempt.checks_passed": attempt.checks_passed ?? undefined,
      },
      ...(attempt.outcome === "failed" || attempt.outcome === "timed_out"
        ? { error: `the agent's run ended ${attempt.outcome}` }
        : {}),
    });
    // Checks run one after another once the run is over: each is placed by the event caesar wrote when it
    // ended, else by its duration after the one before.
    let at = runEnd;
    attempt.checks.forEach((check, index) => {
      const ended = checkEnds.get(checkEventId(attempt.attempt, index));
      const end = ended ?? at + check.duration_ms;
      spans.push({
        name: "caesar.check",
        traceId: context.trace_id,
        parentSpanId: context.span_id,
        start: end - check.duration_ms,
        end,
        attributes: {
          "caesar.attempt": attempt.attempt,
          "caesar.check.command": check.command,
          "caesar.check.passed": check.passed,
          "caesar.check.exit_code": check.exit_code,
          "caesar.check.from": check.from,
        },
        ...(check.passed ? {} : { error: check.error ?? `exit code ${check.exit_code}` }),
      });
      at = end;
    });
  }
  const runOf = (at: number) =>
    runs.find(({ attempt }) => at >= Date.parse(attempt.started_at) && at <= Date.parse(attempt.finished_at));
  let tools = 0;
  for (const event of events) {
    if (event.type !== "tool_use" || event.status === "started" || tools >= MAX_TOOL_SPANS) continue;
    // caesar's own checks are `caesar.check` spans, not the agent's tool calls.
    if (isCheckEvent(event)) continue;
    tools++;
    const toolEnd = Date.parse(event.at);
    const toolStart = toolEnd - (event.duration_ms ?? 0);
    const attributes: Record<string, AttributeValue> = {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": event.tool,
      "gen_ai.tool.call.id": event.id,
      "caesar.tool.input_summary": event.input_summary?.slice(0, 200),
      "caesar.tool.exit_code": event.exit_code,
    };
    spans.push({
      name: `execute_tool ${event.tool}`.trim(),
      traceId: context.trace_id,
      parentSpanId: runOf(toolEnd)?.spanId ?? context.span_id,
      start: toolStart,
      end: toolEnd,
      attributes,
      ...(event.status === "failed"
        ? { error: event.output_summary?.slice(0, 200) ?? "the tool failed" }
        : {}),
    });
  }
  return spans;
}

/** The id of the `tool_use` events of a check (engine/conductor/checks.ts). */
function checkEventId(attempt: number, index: number): string {
  return `check-${attempt}-${index + 1}`;
}

function isCheckEvent(event: CaesarEvent): boolean {
  return event.type === "tool_use" && event.tool === "check" && /^check-\d+-\d+$/.test(event.id);
}

function firstLine(text: string): string {
  return (text.split("\n")[0] ?? "").slice(0, 200);
}
