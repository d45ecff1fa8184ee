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
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

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
  if (!name.includes(".") && name !== "localhost" && !host.startsWith("*."))
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

/** A loopback address or name: served inside the sandbox at the same address (a local model server). */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\./.test(host);
}

/** The loopback ports the rules name: each is forwarded into the sandbox at 127.0.0.1:<port>. */
export function loopbackPorts(rules: readonly HostRule[]): number[] {
  const ports = rules
    .filter((rule) => isLoopbackHost(rule.host) && rule.port !== null)
    .map((rule) => rule.port!);
  return [...new Set(ports)].sort((a, b) => a - b);
}

/**
 * An address a wildcard may not lead to: the host's loopback, unspecified, private (RFC 1918, unique
 * local), link-local (cloud metadata at 169.254.169.254), CGNAT and multicast ranges.
 */
export function isInternalAddress(address: string): boolean {
  if (isIP(address) === 4) {
    const [a, b] = address.split(".").map(Number) as [number, number];
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 100 && b >= 64 && b <= 127) ||
      a >= 224
    );
  }
  const lower = address.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped) return isInternalAddress(mapped[1]!);
  return (
    lower === "::" ||
    lower === "::1" ||
    lower.startsWith("fe8") ||
    lower.startsWith("fe9") ||
    lower.startsWith("fea") ||
    lower.startsWith("feb") ||
    lower.startsWith("fc") ||
    lower.startsWith("fd") ||
    lower.startsWith("ff")
  );
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
