import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { MachineProxies, parseProxyUrl, UpstreamProxy } from "../../src/sandbox/upstream-proxy.js";

// The machine's proxy, as the egress proxy reads it from its own process's environment.

describe("the machine's proxy URL", () => {
  it("http://user:password@host:port: credentials decoded into Basic, never printed", () => {
    const proxy = parseProxyUrl("HTTPS_PROXY", "http://corp%5Cjane:p%40ss%3Aword@gw.corp.example:3128/");
    expect(proxy).toBeInstanceOf(UpstreamProxy);
    const upstream = proxy as UpstreamProxy;
    expect([upstream.host, upstream.port]).toEqual(["gw.corp.example", 3128]);
    expect(upstream.authorization).toBe(`Basic ${Buffer.from("corp\\jane:p@ss:word").toString("base64")}`);
    const shown = [upstream.label, String(upstream), JSON.stringify({ upstream }), inspect(upstream)].join(
      " ",
    );
    expect(shown).toContain("HTTPS_PROXY (gw.corp.example:3128)");
    for (const secret of ["p@ss", "p%40ss", "word", upstream.authorization!.slice(6)])
      expect(shown).not.toContain(secret);
  });

  it("no scheme is http, no port is 80; IPv6 hosts in brackets", () => {
    expect((parseProxyUrl("http_proxy", "gw.example:8080") as UpstreamProxy).port).toBe(8080);
    expect((parseProxyUrl("http_proxy", "http://gw.example") as UpstreamProxy).port).toBe(80);
    const v6 = parseProxyUrl("http_proxy", "http://[fd00::1]:3128") as UpstreamProxy;
    expect([v6.host, v6.label]).toEqual(["fd00::1", "http_proxy ([fd00::1]:3128)"]);
    expect(v6.authorization).toBeUndefined();
  });

  it("https:// and socks proxies are refused with a clear reason that shows no password", () => {
    const https = parseProxyUrl("HTTPS_PROXY", "https://jane:hunter2@gw.example:443");
    expect(https).toEqual({
      unusable: expect.stringContaining("HTTPS_PROXY names an https:// proxy (gw.example)"),
    });
    const socks = parseProxyUrl("ALL", "socks5://jane:hunter2@gw.example:1080");
    expect(socks).toEqual({ unusable: expect.stringContaining("socks5 proxy") });
    const broken = parseProxyUrl("HTTP_PROXY", "http://jane:hun ter2@[nope");
    expect(broken).toEqual({ unusable: expect.stringContaining("HTTP_PROXY is not a URL") });
    for (const result of [https, socks, broken]) expect(JSON.stringify(result)).not.toContain("hunter2");
  });
});

describe("which of the machine's proxies a request goes through", () => {
  it("tunnels: https_proxy, HTTPS_PROXY, else http_proxy, HTTP_PROXY; plain http: http_proxy, HTTP_PROXY only", () => {
    const label = (proxy: unknown) => (proxy instanceof UpstreamProxy ? proxy.label : proxy);
    const both = MachineProxies.fromEnvironment({
      HTTPS_PROXY: "http://s:1",
      https_proxy: "http://ls:1",
      HTTP_PROXY: "http://p:2",
    });
    expect(label(both.forTunnel("a.example", 443))).toBe("https_proxy (ls:1)");
    expect(label(both.forRequest("a.example", 80))).toBe("HTTP_PROXY (p:2)");
    const httpOnly = MachineProxies.fromEnvironment({ HTTP_PROXY: "http://p:2" });
    expect(label(httpOnly.forTunnel("a.example", 443))).toBe("HTTP_PROXY (p:2)");
    const httpsOnly = MachineProxies.fromEnvironment({ HTTPS_PROXY: "http://s:1", HTTP_PROXY: "  " });
    expect(httpsOnly.forRequest("a.example", 80)).toBeUndefined();
    expect(MachineProxies.fromEnvironment({}).any).toBe(false);
  });

  it("NO_PROXY (no_proxy first) sends what it names directly", () => {
    const proxies = MachineProxies.fromEnvironment({
      HTTPS_PROXY: "http://gw:3128",
      no_proxy: ".corp.example",
      NO_PROXY: "*",
    });
    expect(proxies.forTunnel("git.corp.example", 443)).toBeUndefined();
    expect(proxies.forTunnel("api.example.com", 443)).toBeInstanceOf(UpstreamProxy);
  });

  it("doctor's description names variables, hosts and ports, and the problems — never a password", () => {
    const described = MachineProxies.fromEnvironment({
      HTTPS_PROXY: "https://jane:hunter2@gw:443",
      HTTP_PROXY: "http://jane:hunter2@gw:3128",
    }).describe();
    expect(described.tunnels).toBeNull();
    expect(described.requests).toBe("HTTP_PROXY (gw:3128)");
    expect(described.problems).toEqual([expect.stringContaining("HTTPS_PROXY names an https:// proxy")]);
    expect(JSON.stringify(described)).not.toContain("hunter2");
  });
});
