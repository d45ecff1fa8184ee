import { describe, expect, it } from "vitest";
import {
  formatHostRule,
  isInternalAddress,
  loopbackPorts,
  matchHost,
  parseHostRule,
  parseHostRules,
  urlHosts,
} from "../../src/support/host-rules.js";

describe("host rules of the egress proxy", () => {
  it("reads names, ports, wildcards and addresses, and says what is wrong with the rest", () => {
    expect(parseHostRule("API.Example.com")).toEqual({ host: "api.example.com", port: null });
    expect(parseHostRule("example.com:8443")).toEqual({ host: "example.com", port: 8443 });
    expect(parseHostRule("*.example.com")).toEqual({ host: "*.example.com", port: null });
    expect(parseHostRule("*")).toEqual({ host: "*", port: null });
    expect(parseHostRule("127.0.0.1:11434")).toEqual({ host: "127.0.0.1", port: 11434 });
    expect(parseHostRule("[::1]:8080")).toEqual({ host: "::1", port: 8080 });
    expect(parseHostRule("localhost:1234")).toEqual({ host: "localhost", port: 1234 });
    expect(parseHostRule("example.com:0")).toMatch(/port must be 1–65535/);
    expect(parseHostRule("intranet")).toMatch(/a host name with a dot/);
    expect(parseHostRule("litellm:4000")).toEqual({ host: "litellm", port: 4000 });
    expect(parseHostRule("my_gateway.internal")).toEqual({ host: "my_gateway.internal", port: null });
    expect(parseHostRule("ex ample.com")).toMatch(/not a host name/);
    expect(parseHostRule("-bad.com")).toMatch(/not a host name/);
    expect(() => parseHostRules(["example.com", "http://x"])).toThrow(/http:\/\/x/);
    expect(formatHostRule({ host: "::1", port: 80 })).toBe("[::1]:80");
  });

  it("matches a named host on its port (443 and 80 by default), a wildcard below its domain only", () => {
    const rules = parseHostRules(["api.example.com", "*.cdn.example", "127.0.0.1:9000"]);
    expect(matchHost(rules, "api.example.com", 443)).toBe("named");
    expect(matchHost(rules, "API.EXAMPLE.COM.", 80)).toBe("named");
    expect(matchHost(rules, "api.example.com", 22)).toBeNull();
    expect(matchHost(rules, "evil-api.example.com", 443)).toBeNull();
    expect(matchHost(rules, "a.cdn.example", 443)).toBe("wildcard");
    expect(matchHost(rules, "cdn.example", 443)).toBeNull();
    expect(matchHost(rules, "evilcdn.example", 443)).toBeNull();
    expect(matchHost(rules, "127.0.0.1", 9000)).toBe("named");
    expect(matchHost(rules, "127.0.0.1", 9001)).toBeNull();
    expect(matchHost(parseHostRules(["*"]), "anything.org", 443)).toBe("wildcard");
    expect(matchHost(parseHostRules(["*"]), "anything.org", 25)).toBeNull();
    expect(loopbackPorts(rules)).toEqual([9000]);
  });

  it("knows the host's own networks, which a wildcard never reaches", () => {
    for (const internal of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "::",
      "fe80::1",
      "fd00::1",
      "::ffff:127.0.0.1",
    ])
      expect(isInternalAddress(internal), internal).toBe(true);
    for (const external of ["93.184.216.34", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8"])
      expect(isInternalAddress(external), external).toBe(false);
  });

  it("finds the hosts of the URLs in a text (a base URL, a JSON configuration)", () => {
    expect(urlHosts("http://127.0.0.1:18080")).toEqual(["127.0.0.1:18080"]);
    expect(urlHosts('{"baseURL":"https://gw.example.com/v1","x":"http://[::1]/a"}')).toEqual([
      "gw.example.com",
      "[::1]:80",
    ]);
    expect(urlHosts("no url here")).toEqual([]);
  });
});
