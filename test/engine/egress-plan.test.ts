import { describe, expect, it } from "vitest";
import { collectorRule } from "../../src/engine/lifecycle/egress-plan.js";

// A traced task's sandboxed agent reaches the collector its task's spans go to: that host and port only.
describe("the egress rule for a task's OpenTelemetry collector", () => {
  it("is the traces URL's host and port, its scheme's port when it names none", () => {
    expect(collectorRule("http://127.0.0.1:4318/v1/traces")).toBe("127.0.0.1:4318");
    expect(collectorRule("https://otel.example.com/v1/traces")).toBe("otel.example.com:443");
    expect(collectorRule("http://collector/v1/traces")).toBe("collector:80");
  });

  it("is none for what no rule can say", () => {
    expect(collectorRule("not a url")).toBeUndefined();
    expect(collectorRule("http://exa mple.com/")).toBeUndefined();
  });

  it("is never a wildcard: a collector is one host, and `*.com` would open every host under it", () => {
    // The WHATWG URL parser takes `*` in a host name; the OTLP exporter cannot post to such a URL.
    expect(collectorRule("http://*.com/v1/traces")).toBeUndefined();
    expect(collectorRule("https://*.example.com:4318/v1/traces")).toBeUndefined();
  });
});
