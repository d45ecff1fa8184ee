import { isIP } from "node:net";
import { hostname, networkInterfaces } from "node:os";

/**
 * Who may talk to the server. Loopback peers are "local": they may read without authenticating (the same
 * trust as reading the task directory). Mutations need the bearer token or a dashboard session. When the
 * server is bound to another address (`--host` with `--token`), every /api request from a non-loopback
 * peer must be authenticated, reads included.
 */
export interface AccessPolicy {
  /** The bearer token mutations accept (and, from remote peers, every /api request). */
  token: string;
  /**
   * The token as it is now, when it is the workspace's file (read again each time: a rotation takes
   * effect at once); absent when the server was given its token (--token).
   */
  currentToken?: () => Promise<string>;
  /** The port the server listens on (known once listening; `Host` headers are checked against it). */
  port: number;
  /** The address the server is bound to. */
  host: string;
  /** The origin the server prints and its login links use, e.g. http://127.0.0.1:4173 (known once listening). */
  origin: string;
}

export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const plain = address.startsWith("::ffff:") ? address.slice("::ffff:".length) : address;
  if (isIP(plain) === 4) return plain.startsWith("127.");
  return plain === "::1";
}

/** Is this a host a user may bind without a token: a loopback address, or `localhost`? */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || isLoopbackAddress(host.replace(/^\[|\]$/g, ""));
}

const WILDCARDS = new Set(["0.0.0.0", "::", "[::]"]);

/**
 * Is `value` (a `Host` header) an address this server is served at, with its port? Loopback names always;
 * the configured `--host` when there is one; for a wildcard bind, this machine's own addresses and name.
 * Any other name is a DNS-rebinding attempt — a page of another site whose name was made to resolve to
 * this machine, so that the browser treats the server as that site — and is refused.
 */
export function isServedHostHeader(value: string | undefined, policy: AccessPolicy): boolean {
  if (!value) return false;
  const match = /^(\[[^\]]+\]|[^:[\]]+)(?::(\d+))?$/.exec(value.trim().toLowerCase());
  if (!match) return false;
  const [, name, port] = match;
  if (port !== undefined && Number(port) !== policy.port) return false;
  if (port === undefined && policy.port !== 80) return false;
  if (isLoopbackHost(name!)) return true;
  const bound = policy.host.toLowerCase();
  if (isLoopbackHost(bound)) return false;
  if (WILDCARDS.has(bound)) return machineNames().has(name!);
  return bracketed(bound) === name;
}

/** This machine's addresses (IPv6 in brackets, as in a Host header) and its host name. */
function machineNames(): Set<string> {
  const names = new Set([hostname().toLowerCase()]);
  for (const addresses of Object.values(networkInterfaces())) {
    for (const { address } of addresses ?? []) names.add(bracketed(address.toLowerCase()));
  }
  return names;
}

function bracketed(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/**
 * A browser marks cross-site requests: `Origin` names the page's origin and `Sec-Fetch-Site` says whether
 * it is ours. A request is same-origin when neither header says otherwise (programs send neither).
 */
export function isSameOrigin(headers: Headers): boolean {
  const site = headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") return false;
  const origin = headers.get("origin");
  return origin === null || isOwnOrigin(origin, headers);
}

/** Is `origin` this server's, as the request addressed it (its `Host`, already checked to be served)? */
export function isOwnOrigin(origin: string | undefined, headers: Headers): boolean {
  const host = headers.get("host");
  return origin !== undefined && host !== null && origin.toLowerCase() === `http://${host.toLowerCase()}`;
}
