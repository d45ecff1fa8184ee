import { isIP } from "node:net";

/**
 * Which hosts a sandboxed agent may reach through caesar's egress proxy. A rule is one of:
 * - `example.com` — that host, ports 443 and 80;
 * - `example.com:8443`, `127.0.0.1:11434`, `[::1]:8080` — that host and port only;
 * - `*.example.com` — any subdomain of it (not itself), ports 443 and 80;
 * - `*` — any host on ports 443 and 80 that resolves to a public address.
 * A wildcard never reaches the host's loopback, a private or a link-local address (a name can resolve to
 * one): only a rule naming the host itself does.
 */
export interface HostRule {
  /** Lower case, without brackets; `*` or `*.suffix` for a wildcard. */
  host: string;
  /** null: 443 and 80. */
  port: number | null;
}

const DEFAULT_PORTS = [443, 80];
// Underscores too: container and cluster host names have them (a model gateway at my_gateway:4000).
const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

/** A rule from its text, or the reason it is not one (config validation says it). */
export function parseHostRule(text: string): HostRule | string {
  const trimmed = text.trim().toLowerCase();
  if (trimmed === "*") return { host: "*", port: null };
  let host = trimmed;
  let port: number | null = null;
  const bracketed = /^\[([0-9a-f:.]+)\](?::(\d+))?$/.exec(trimmed);
  if (bracketed) {
    host = bracketed[1]!;
    port = bracketed[2] ? Number(bracketed[2]) : null;
  } else if (/:\d+$/.test(trimmed) && trimmed.split(":").length === 2) {
    const at = trimmed.lastIndexOf(":");
    host = trimmed.slice(0, at);
    port = Number(trimmed.slice(at + 1));
  }
  if (port !== null && !(Number.isInteger(port) && port > 0 && port < 65536))
    return `"${text}": the port must be 1–65535`;
  if (isIP(host)) return { host, port };
  const name = host.startsWith("*.") ? host.slice(2) : host;
  // A one-word host only with its port (a gateway in a compose network: litellm:4000), never alone.
  if (!name.includes(".") && name !== "localhost" && !host.startsWith("*.") && port === null)
    return `"${text}": a host name with a dot (example.com), a wildcard (*.example.com, *), an IP address, or one of them with :port`;
  if (!name.split(".").every((label) => LABEL.test(label)))
    return `"${text}": not a host name (letters, digits and hyphens between dots)`;
  return { host, port };
}

/** The rules of a list, refusing the first one that is not (the message names it). */
export function parseHostRules(texts: readonly string[]): HostRule[] {
  return texts.map((text) => {
    const rule = parseHostRule(text);
    if (typeof rule === "string") throw new Error(rule);
    return rule;
  });
}

export function formatHostRule(rule: HostRule): string {
  const host = rule.host.includes(":") ? `[${rule.host}]` : rule.host;
  return rule.port === null ? host : `${host}:${rule.port}`;
}

/** How a request for `host:port` matches: by a rule naming it, by a wildcard, or not at all. */
export function matchHost(
  rules: readonly HostRule[],
  host: string,
  port: number,
): "named" | "wildcard" | null {
  const wanted = host
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  let wildcard = false;
  for (const rule of rules) {
    const portOk = rule.port === null ? DEFAULT_PORTS.includes(port) : rule.port === port;
    if (!portOk) continue;
    if (rule.host === wanted) return "named";
    if (rule.host === "*" || (rule.host.startsWith("*.") && wanted.endsWith(rule.host.slice(1))))
      wildcard = true;
  }
  return wildcard ? "wildcard" : null;
}

/**
 * A loopback address or name: served inside the sandbox at the same address (a local model server). Read
 * as matchHost reads a name (case and one trailing dot ignored): `localhost.` is the rule `localhost`'s
 * host, and never the machine's proxy's to reach.
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return name === "localhost" || name === "::1" || /^127\./.test(name);
}

/** The ports of 127.0.0.1 the rules name: each is forwarded into the sandbox at 127.0.0.1:<port>. */
export function loopbackPorts(rules: readonly HostRule[]): number[] {
  // Only 127.0.0.1 (and localhost): what is forwarded is the host's 127.0.0.1:<port>, served inside at
  // the same address. A rule naming another loopback address is reached through the proxy, at that address.
  const ports = rules
    .filter((rule) => (rule.host === "127.0.0.1" || rule.host === "localhost") && rule.port !== null)
    .map((rule) => rule.port!);
  return [...new Set(ports)].sort((a, b) => a - b);
}

/**
 * An address a wildcard may not lead to: the host's loopback, unspecified, private (RFC 1918, unique
 * local), link-local (cloud metadata at 169.254.169.254), CGNAT, benchmarking and multicast ranges. An
 * IPv6 address is read as its 16 bytes, whatever its spelling (`0:0:0:0:0:0:0:1` and `0::1` are `::1`):
 * one that carries an IPv4 address (mapped `::ffff:7f00:1`, translated, NAT64, 6to4) is judged by that
 * address, since the kernel connects to it. What does not parse as an address is internal (refused).
 */
export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) {
    const [a, b, c] = address.split(".").map(Number) as [number, number, number];
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 192 && b === 0 && c === 0) ||
      (a === 198 && (b === 18 || b === 19)) ||
      (a === 100 && b >= 64 && b <= 127) ||
      a >= 224
    );
  }
  const bytes = family === 6 ? ipv6Bytes(address) : undefined;
  if (!bytes) return true;
  const zero = (from: number, to: number) => bytes.slice(from, to).every((byte) => byte === 0);
  const v4 = (at: number) => bytes.slice(at, at + 4).join(".");
  // ::/96: unspecified, loopback and the deprecated IPv4-compatible addresses.
  if (zero(0, 12)) return true;
  // ::ffff:0:0/96 (IPv4-mapped) and ::ffff:0:0:0/96 (IPv4-translated).
  if (zero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return isInternalAddress(v4(12));
  if (zero(0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && zero(10, 12)) return isInternalAddress(v4(12));
  // 64:ff9b::/96 (NAT64, the IPv4 address it leads to) and 64:ff9b:1::/48 (local NAT64).
  const nat64 = bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b;
  if (nat64 && zero(4, 12)) return isInternalAddress(v4(12));
  if (nat64 && bytes[4] === 0 && bytes[5] === 1) return true;
  // 2002::/16 (6to4): the IPv4 address of its relay.
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return isInternalAddress(v4(2));
  // fc00::/7 unique local, fe80::/10 link-local, fec0::/10 site-local, ff00::/8 multicast.
  return (bytes[0]! & 0xfe) === 0xfc || (bytes[0] === 0xfe && bytes[1]! >= 0x80) || bytes[0] === 0xff;
}

/** The 16 bytes of an IPv6 address in any of its spellings (zone dropped), or undefined. */
function ipv6Bytes(address: string): number[] | undefined {
  let text = address.toLowerCase().replace(/%.*$/, "");
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    if ([a, b, c, d].some((n) => n > 255)) return undefined;
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groups = (part: string) => (part === "" ? [] : part.split(":"));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  if (fill < 0) return undefined;
  const all = [...head, ...Array<string>(fill).fill("0"), ...tail];
  if (all.length !== 8 || !all.every((group) => /^[0-9a-f]{1,4}$/.test(group))) return undefined;
  return all.flatMap((group) => {
    const value = Number.parseInt(group, 16);
    return [value >> 8, value & 0xff];
  });
}

/** The host (and port, when the URL names one or is plain http) of each http(s) URL in a text. */
export function urlHosts(text: string): string[] {
  const hosts: string[] = [];
  for (const match of text.matchAll(/\bhttps?:\/\/[^\s"'<>\\]+/gi)) {
    try {
      const url = new URL(match[0]);
      const port = url.port || (url.protocol === "http:" ? "80" : "");
      hosts.push(port ? `${url.hostname}:${port}` : url.hostname);
    } catch {
      // not a URL after all
    }
  }
  return hosts;
}
