import { describe, expect, it } from "vitest";
import { bypassesProxy, parseNoProxy } from "../../src/support/no-proxy.js";

describe("NO_PROXY, read as curl, wget, Python and Go read it", () => {
  const bypass = (list: string, host: string, port = 443) => bypassesProxy(parseNoProxy(list), host, port);

  it("a domain, with or without a leading dot or `*.`, is itself and every name under it — whole labels only", () => {
    for (const list of ["example.com", ".example.com", "*.example.com", " EXAMPLE.com. "]) {
      expect(bypass(list, "example.com"), list).toBe(true);
      expect(bypass(list, "api.example.com"), list).toBe(true);
      expect(bypass(list, "a.b.example.com"), list).toBe(true);
      expect(bypass(list, "badexample.com"), list).toBe(false);
      expect(bypass(list, "example.com.evil.test"), list).toBe(false);
    }
  });

  it("a comma list, blanks ignored; `*` alone is every host; empty is none", () => {
    expect(bypass("localhost, .corp.internal ,, 10.1.2.3", "git.corp.internal")).toBe(true);
    expect(bypass("localhost, .corp.internal ,, 10.1.2.3", "10.1.2.3")).toBe(true);
    expect(bypass("localhost, .corp.internal ,, 10.1.2.3", "10.1.2.4")).toBe(false);
    expect(bypass("*", "anything.example")).toBe(true);
    expect(bypass("", "example.com")).toBe(false);
    expect(bypass(",, ,", "example.com")).toBe(false);
    // `*` only alone: as part of a name it is no wildcard.
    expect(bypass("*example.com", "badexample.com")).toBe(false);
  });

  it("host:port entries bypass that port only; IP addresses match exactly, bracketed or not", () => {
    expect(bypass("example.com:8443", "example.com", 8443)).toBe(true);
    expect(bypass("example.com:8443", "example.com", 443)).toBe(false);
    expect(bypass("[::1]:8080", "::1", 8080)).toBe(true);
    expect(bypass("[::1]:8080", "::1", 80)).toBe(false);
    expect(bypass("::1", "[::1]", 80)).toBe(true);
    expect(bypass("2001:db8::1", "2001:db8::1", 443)).toBe(true);
    expect(bypass("10.0.0.1", "10.0.0.10")).toBe(false);
    // A name is not matched as the suffix of an address, nor the other way round.
    expect(bypass("0.0.1", "10.0.0.1")).toBe(false);
  });

  it("a CIDR range is not understood: it bypasses nothing (the traffic goes through the machine's proxy)", () => {
    expect(parseNoProxy("10.0.0.0/8")).toEqual([]);
    expect(bypass("10.0.0.0/8", "10.1.2.3")).toBe(false);
  });
});
