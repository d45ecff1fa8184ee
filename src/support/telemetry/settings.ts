import * as z from "../zod.js";

/** The OTLP encodings caesar exports with (both over HTTP; gRPC is not among them). */
export const OtlpProtocolSchema = z.enum(["http/protobuf", "http/json"]);
export type OtlpProtocol = z.infer<typeof OtlpProtocolSchema>;

/**
 * Where a task's spans go, resolved once when the task is planned (from the planning process's
 * environment and `[telemetry]`) and recorded in its plan: the conductor service and cluster workers do
 * not share the environment of the front end that asked. Never a secret: plan.json has a mirror any agent
 * of the task can read (headers, OTEL_EXPORTER_OTLP_HEADERS, stay in the exporting process's environment).
 */
export const TelemetrySettingsSchema = z.object({
  /** The full URL spans are posted to (…/v1/traces). */
  traces_url: z.string().min(1),
  protocol: OtlpProtocolSchema,
  service_name: z.string().min(1),
  resource_attributes: z.record(z.string(), z.string()).default({}),
});
export type TelemetrySettings = z.infer<typeof TelemetrySettingsSchema>;

/** `[telemetry]` as the configuration has it (null: not set in any layer). */
export interface TelemetryConfig {
  enabled: boolean | null;
  endpoint: string | null;
  protocol: string | null;
  service_name: string | null;
  resource_attributes: Record<string, string>;
}

export type TelemetryResolution =
  | { settings: TelemetrySettings; problem?: undefined }
  | { settings: null; problem?: string };

const DEFAULT_SERVICE_NAME = "caesar";

/**
 * Telemetry as the standard OpenTelemetry variables and `[telemetry]` say, the variables winning (they are
 * how an operator points any OpenTelemetry program at a collector). Off unless an endpoint is set;
 * `[telemetry] enabled = false`, OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off. A
 * protocol caesar cannot speak turns it off too, with a problem to say so.
 */
export function resolveTelemetry(config: TelemetryConfig, env: NodeJS.ProcessEnv): TelemetryResolution {
  if (config.enabled === false) return { settings: null };
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return { settings: null };
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === "none") return { settings: null };
  const tracesUrl = tracesUrlOf(env, config.endpoint);
  if (!tracesUrl) return { settings: null };
  const rawProtocol =
    nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ??
    nonEmpty(env.OTEL_EXPORTER_OTLP_PROTOCOL) ??
    config.protocol ??
    "http/protobuf";
  const protocol = OtlpProtocolSchema.safeParse(rawProtocol);
  if (!protocol.success)
    return {
      settings: null,
      problem: `OTLP protocol "${rawProtocol}" is not one caesar exports with (http/protobuf, http/json), so no spans are sent. Set OTEL_EXPORTER_OTLP_PROTOCOL or [telemetry] protocol to one of them.`,
    };
  const resource = {
    ...config.resource_attributes,
    ...parseResourceAttributes(env.OTEL_RESOURCE_ATTRIBUTES),
  };
  const serviceName =
    nonEmpty(env.OTEL_SERVICE_NAME) ??
    config.service_name ??
    resource["service.name"] ??
    DEFAULT_SERVICE_NAME;
  delete resource["service.name"];
  return {
    settings: {
      traces_url: tracesUrl,
      protocol: protocol.data,
      service_name: serviceName,
      resource_attributes: resource,
    },
  };
}

/**
 * The signal-specific variable is the URL as written; the general one (and `[telemetry] endpoint`) is a
 * base URL that `v1/traces` is appended to, as the OTLP exporter specification says.
 */
function tracesUrlOf(env: NodeJS.ProcessEnv, configured: string | null): string | undefined {
  const exact = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  if (exact) return exact;
  const base = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT) ?? configured ?? undefined;
  if (!base) return undefined;
  return `${base.replace(/\/+$/, "")}/v1/traces`;
}

/** OTEL_RESOURCE_ATTRIBUTES: `key1=value1,key2=value2`, values percent-encoded; malformed pairs are skipped. */
export function parseResourceAttributes(raw: string | undefined): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const pair of (raw ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    const key = pair.slice(0, at).trim();
    try {
      if (key) attributes[key] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      // a value that is not valid percent-encoding: skipped, as the specification allows
    }
  }
  return attributes;
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
