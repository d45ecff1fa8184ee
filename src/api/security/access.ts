import { isIP } from "node:net";

/**
 * Who may talk to the server. Loopback peers are "local": they may read without a token (the same trust
 * as reading the task directory), and only them may obtain the token for the dashboard. When the server
 * is bound to another address (`--host` with `--token`), every request from a non-loopback peer must carry
 * the token, reads included.
 */
export interface AccessPolicy {
  /** The token mutations need (and, from remote peers, every /api request). */
  token: string;
  /** The port the server listens on (known once listening; `Host` headers are checked against it). */
  port: number;
  /** The address the server is bound to. */
  host: string;
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

/**
 * The `Host` header values a local browser or client uses for this server. Anything else from a loopback
 * peer is a DNS-rebinding attempt (a page of another site resolved to 127.0.0.1) and is refused.
 */
export function isLocalHostHeader(value: string | undefined, policy: AccessPolicy): boolean {
  if (!value) return false;
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(value.trim().toLowerCase());
  if (!match) return false;
  const [, name, port] = match;
  if (port !== undefined && Number(port) !== policy.port) return false;
  if (port === undefined && policy.port !== 80) return false;
  return isLoopbackHost(name!);
}

/**
 * A browser marks cross-site requests: `Origin` names the page's origin and `Sec-Fetch-Site` says whether
 * it is ours. A request is same-origin when neither header says otherwise (programs send neither).
 */
export function isSameOrigin(headers: Headers): boolean {
  const site = headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") return false;
  const origin = headers.get("origin");
  if (origin === null) return true;
  const host = headers.get("host");
  return host !== null && origin.toLowerCase() === `http://${host.toLowerCase()}`;
}
