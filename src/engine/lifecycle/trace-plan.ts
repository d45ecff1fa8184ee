import type { EffectiveConfig } from "../../config/effective.js";
import type { Finding } from "../../protocol/report.js";
import { resolveTelemetry, type TelemetrySettings } from "../../support/telemetry/settings.js";
import { makeTraceContext, type TraceContext } from "../../support/telemetry/trace-context.js";
import type { TaskPlan } from "../store/task-plan.js";

/**
 * A new task's place in its trace and where its spans go. A nested task continues its parent's trace under
 * its parent's span and exports where its parent does (its request may be planned by the conductor
 * service, whose environment is not the person's); a task started by a person or a program continues that
 * program's TRACEPARENT, if it has one, and takes the settings of the planning process's OTEL_* variables
 * and `[telemetry]`.
 */
export function planTrace(
  config: EffectiveConfig,
  env: NodeJS.ProcessEnv,
  parent: TaskPlan | undefined,
): { trace: TraceContext; telemetry: TelemetrySettings | null; findings: Finding[] } {
  if (parent) return { trace: makeTraceContext(parent.trace), telemetry: parent.telemetry, findings: [] };
  const telemetry = config.telemetry;
  const resolved = resolveTelemetry(
    {
      enabled: telemetry.enabled.value,
      endpoint: telemetry.endpoint.value,
      protocol: telemetry.protocol.value,
      service_name: telemetry.service_name.value,
      resource_attributes: telemetry.resource_attributes.value,
    },
    env,
  );
  return {
    trace: makeTraceContext(null, env.TRACEPARENT),
    telemetry: resolved.settings,
    findings: resolved.problem
      ? [{ severity: "low", title: "Telemetry is off", detail: resolved.problem }]
      : [],
  };
}
