import { describe, expect, it } from "vitest";
import {
  parseResourceAttributes,
  resolveTelemetry,
  type TelemetryConfig,
} from "../../src/support/telemetry/settings.js";
import {
  formatTraceparent,
  makeTraceContext,
  parseTraceparent,
} from "../../src/support/telemetry/trace-context.js";

const none: TelemetryConfig = {
  enabled: null,
  endpoint: null,
  protocol: null,
  service_name: null,
  resource_attributes: {},
};

describe("telemetry settings", () => {
  it("is off without an endpoint, whatever else is set", () => {
    expect(
      resolveTelemetry(none, { OTEL_SERVICE_NAME: "x", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }),
    ).toEqual({
      settings: null,
    });
  });

  it("takes the standard variables, which win over [telemetry]", () => {
    const config = {
      ...none,
      endpoint: "http://config:4318",
      protocol: "http/json",
      service_name: "from-config",
    };
    expect(resolveTelemetry(config, {}).settings).toEqual({
      traces_url: "http://config:4318/v1/traces",
      protocol: "http/json",
      service_name: "from-config",
      resource_attributes: {},
    });
    const resolved = resolveTelemetry(
      { ...config, resource_attributes: { team: "config", keep: "yes" } },
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://env:4318/",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
        OTEL_SERVICE_NAME: "from-env",
        OTEL_RESOURCE_ATTRIBUTES: "team=env,service.name=ignored",
      },
    );
    expect(resolved.settings).toEqual({
      traces_url: "http://env:4318/v1/traces",
      protocol: "http/protobuf",
      service_name: "from-env",
      resource_attributes: { team: "env", keep: "yes" },
    });
  });

  it("uses the traces endpoint as written, and service.name from the resource when nothing else names it", () => {
    const resolved = resolveTelemetry(none, {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://base:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://exact:9999/custom",
      OTEL_RESOURCE_ATTRIBUTES: "service.name=named",
    });
    expect(resolved.settings).toMatchObject({
      traces_url: "http://exact:9999/custom",
      protocol: "http/protobuf",
      service_name: "named",
    });
  });

  it("is turned off by [telemetry] enabled = false, OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER=none", () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://env:4318" };
    expect(resolveTelemetry({ ...none, enabled: false }, env).settings).toBeNull();
    expect(resolveTelemetry(none, { ...env, OTEL_SDK_DISABLED: "true" }).settings).toBeNull();
    expect(resolveTelemetry(none, { ...env, OTEL_TRACES_EXPORTER: "none" }).settings).toBeNull();
  });

  it("says so when the protocol is one caesar does not speak (gRPC)", () => {
    const resolved = resolveTelemetry(none, {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://env:4317",
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
    });
    expect(resolved.settings).toBeNull();
    expect(resolved.problem).toContain('OTLP protocol "grpc"');
  });

  it("parses OTEL_RESOURCE_ATTRIBUTES, percent-decoded, skipping what is malformed", () => {
    expect(parseResourceAttributes("a=1, b = two%20words ,bad,=x,c=%E0%A4%A,d=")).toEqual({
      a: "1",
      b: "two words",
      d: "",
    });
  });
});

describe("trace context", () => {
  const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
  const spanId = "00f067aa0ba902b7";

  it("parses and formats W3C traceparent", () => {
    expect(parseTraceparent(`00-${traceId}-${spanId}-01`)).toEqual({ traceId, spanId });
    expect(parseTraceparent(`00-${"0".repeat(32)}-${spanId}-01`)).toBeUndefined();
    expect(parseTraceparent(`ff-${traceId}-${spanId}-01`)).toBeUndefined();
    expect(parseTraceparent("garbage")).toBeUndefined();
    expect(formatTraceparent({ trace_id: traceId, span_id: spanId })).toBe(`00-${traceId}-${spanId}-01`);
  });

  it("puts a task under its parent's span, else under the caller's TRACEPARENT, else in a new trace", () => {
    const child = makeTraceContext(
      { trace_id: traceId, span_id: spanId },
      `00-${"1".repeat(32)}-${"2".repeat(16)}-01`,
    );
    expect(child).toMatchObject({ trace_id: traceId, parent_span_id: spanId });
    expect(child.span_id).toMatch(/^[0-9a-f]{16}$/);
    expect(makeTraceContext(null, `00-${traceId}-${spanId}-01`)).toMatchObject({
      trace_id: traceId,
      parent_span_id: spanId,
    });
    const fresh = makeTraceContext(null, undefined);
    expect(fresh.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(fresh.parent_span_id).toBeNull();
  });
});
