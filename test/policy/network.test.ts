import { describe, expect, it } from "vitest";
import type { AgentCapabilities } from "../../src/agents/adapter.js";
import { resolveNetwork } from "../../src/policy/network.js";

describe("network is a result", () => {
  const caps = (value: AgentCapabilities["network"]["value"]) =>
    ({ network: { value, why: "because" } }) as AgentCapabilities;

  it("refuses on for an agent that cannot have it, with the reason and the remedy", () => {
    expect(() => resolveNetwork("codex", "on", "read-only", caps("write-only"))).toThrow(
      expect.objectContaining({
        code: "network_unavailable",
        detail: expect.stringContaining("--mode write"),
      }),
    );
  });

  it("runs off with a finding when the agent cannot be confined; false only when caesar knows", () => {
    expect(resolveNetwork("a", "off", "write", caps("open"))).toMatchObject({
      network: true,
      findings: [{ title: "Network could not be cut" }],
    });
    expect(resolveNetwork("a", "off", "write", caps("toggle"))).toEqual({ network: false, findings: [] });
    expect(resolveNetwork("a", "auto", "read-only", caps("write-only")).network).toBe(false);
    expect(resolveNetwork("a", "auto", "write", caps("open")).network).toBe(true);
  });
});
