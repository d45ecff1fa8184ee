import { chmod, rm } from "node:fs/promises";
import {
  type ClientRequest,
  createServer,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from "node:http";
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from "node:https";
import { isIP } from "node:net";
import type { Duplex } from "node:stream";
import { connect as tlsConnect } from "node:tls";
import { formatHostRule, isLoopbackHost } from "../support/host-rules.js";
import { type MachineProxies, openTunnel, type UnusableProxy, UpstreamProxy } from "./upstream-proxy.js";

/** The length from which a key is also looked for inside other text (hideKeys). */
const MIN_KEY_INSIDE = 16;

/** Requests one task's door forwards at once (the peer is untrusted). */
const MAX_REQUESTS = 64;

/** Headers of one hop, never passed on (RFC 9110 §7.6.1), the agent's own Host, and the forwarding headers. */
const HOP_HEADERS = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  // What a gateway in front of the provider may route by, which the agent does not choose.
  "forwarded",
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-proto",
  "x-forwarded-port",
  "x-forwarded-prefix",
  "x-original-url",
  "x-rewrite-url",
  "x-real-ip",
]);

/**
 * The headers a provider's key is sent in (Anthropic's x-api-key, `Authorization: Bearer`, Google's and
 * Azure's): only there, and only as the whole value, is a placeholder replaced by its key. Elsewhere a
 * provider may quote what it was sent in its answer's body (an unknown `anthropic-beta`), which is not masked.
 */
const KEY_HEADERS = new Set(["authorization", "x-api-key", "x-goog-api-key", "api-key"]);

/**
 * A provider's door for a sandboxed agent whose key is masked (agents/key-masks.ts): an HTTP server on a
 * Unix socket in the task's egress folder (its relay serves it on the sandbox's loopback), which sends each
 * request on to the provider's base URL — that origin, that path prefix, nothing the agent chooses but the
 * rest of the path, no `.` or `..` segment — with a placeholder that is a key header's value (`x-api-key`,
 * `Authorization: Bearer`…) replaced by the real key. Only there: a body the agent wrote (a prompt), another
 * header, are passed as they are, so neither a model nor a provider quoting a header can be made to repeat
 * the key. The key in an
 * answer's headers is put back to its placeholder. Through the machine's proxy when its environment names one
 * for the provider (never the agent's).
 */
export class KeyDoor {
  private server: Server | undefined;
  private readonly route: Route;
  private readonly keys: ReadonlyMap<string, string>;
  /** Key → placeholder, for the answers (hideKeys). */
  private readonly hidden: readonly (readonly [string, string])[];
  private active = 0;
  private readonly agents: { http: HttpAgent; https: HttpsAgent };

  constructor(
    readonly socketPath: string,
    upstream: string,
    /** Placeholder → key. */
    keys: ReadonlyMap<string, string>,
    machine?: MachineProxies,
  ) {
    this.route = routeOf(new URL(upstream), machine);
    this.keys = keys;
    this.hidden = [...keys].map(([placeholder, key]) => [key, placeholder] as const);
    this.agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  }

  async listen(): Promise<void> {
    await rm(this.socketPath, { force: true });
    const server = createServer((req, res) => this.forward(req, res));
    server.on("clientError", (_error, socket) => socket.destroy());
    server.maxConnections = MAX_REQUESTS;
    await new Promise<void>((done, fail) => {
      server.once("error", fail);
      server.listen(this.socketPath, () => done());
    });
    server.on("error", () => undefined);
    await chmod(this.socketPath, 0o600);
    this.server = server;
  }

  close(): void {
    this.server?.close();
    this.server?.closeAllConnections();
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private forward(req: IncomingMessage, res: ServerResponse): void {
    const path = req.url ?? "";
    // Origin-form only: the door's host is the provider's, whatever the agent writes.
    const { origin, prefix, proxy } = this.route;
    if (!path.startsWith("/") || path.startsWith("//") || leavesPrefix(path)) {
      refuse(res, 400, `caesar's key door takes a path of ${origin}, not "${path.slice(0, 100)}".`);
      req.resume();
      return;
    }
    if (this.active >= MAX_REQUESTS) {
      refuse(res, 503, "caesar's key door is forwarding as many requests as it takes at once.");
      req.resume();
      return;
    }
    this.active++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.active--;
    };
    res.once("close", release);
    // The machine's proxy for the provider is named but cannot be used (an https:// or SOCKS one): refused,
    // as the egress proxy refuses, never sent around it.
    if (proxy !== undefined && "unusable" in proxy) {
      refuse(res, 502, `caesar's key door did not reach ${origin}: ${proxy.unusable}`);
      req.resume();
      return;
    }
    const headers = this.unmask(req.headers);
    let outgoing: ClientRequest;
    try {
      outgoing = this.open(`${prefix}${path}`, req.method ?? "GET", headers, (answer) =>
        this.answer(answer, res),
      );
    } catch (error) {
      // A request Node will not send (a key with a character no header may hold: a CR of a CRLF `.env`):
      // refused, never thrown in the service that conducts every task. Its message is not quoted.
      const why = (error as NodeJS.ErrnoException).code ?? "a request Node will not send";
      refuse(res, 502, `caesar's key door could not send this request to ${origin} (${why}).`);
      req.resume();
      return;
    }
    outgoing.once("error", (error) => {
      if (res.headersSent) res.destroy();
      else refuse(res, 502, `caesar's key door could not reach ${origin}: ${error.message}`);
    });
    res.once("close", () => {
      if (!res.writableFinished) outgoing.destroy();
    });
    req.pipe(outgoing);
    req.once("error", () => outgoing.destroy());
  }

  /** The provider's answer, passed on with its key masked. */
  private answer(answer: IncomingMessage, res: ServerResponse): void {
    try {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, this.mask(answer.headers));
    } catch {
      // A head Node will not send on (the service conducts every task: it must not throw here).
      answer.destroy();
      res.destroy();
      return;
    }
    answer.pipe(res);
    answer.once("error", () => res.destroy());
  }

  /** The request to the provider: direct, or through the machine's proxy (CONNECT for https). */
  private open(
    path: string,
    method: string,
    headers: OutgoingHttpHeaders,
    onAnswer: (answer: IncomingMessage) => void,
  ) {
    const { origin, hostHeader, authority, secure, host, port, proxy } = this.route;
    const gateway = proxy instanceof UpstreamProxy ? proxy : undefined;
    headers.host = hostHeader;
    if (!gateway) {
      const options = {
        host,
        port,
        path,
        method,
        headers,
        agent: secure ? this.agents.https : this.agents.http,
      };
      return secure ? httpsRequest(options, onAnswer) : httpRequest(options, onAnswer);
    }
    if (!secure) {
      const auth = gateway.authorization ? { "proxy-authorization": gateway.authorization } : {};
      return httpRequest(
        {
          host: gateway.host,
          port: gateway.port,
          path: `${origin}${path}`,
          method,
          headers: { ...headers, ...auth },
        },
        onAnswer,
      );
    }
    return httpsRequest(
      {
        host,
        port,
        path,
        method,
        headers,
        agent: false,
        createConnection: (_options: unknown, done: (error: Error | null, socket: Duplex) => void) => {
          openTunnel(gateway, authority).tunnel.then(
            ({ socket, rest }) => {
              if (rest.length > 0) socket.unshift(rest);
              const servername = isIP(host) ? {} : { servername: host };
              done(null, tlsConnect({ socket, ...servername }));
            },
            (error: Error) => done(error, undefined as unknown as Duplex),
          );
          return undefined;
        },
      } as RequestOptions,
      onAnswer,
    );
  }

  /** The agent's headers, without one hop's, a placeholder that is a key header's value replaced by its key. */
  private unmask(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
    const out: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined || HOP_HEADERS.has(name)) continue;
      if (!KEY_HEADERS.has(name)) out[name] = value;
      else out[name] = Array.isArray(value) ? value.map((one) => this.keyFor(one)) : this.keyFor(value);
    }
    return out;
  }

  /** A key header's value: the placeholder, or `Bearer <placeholder>`, with the key in its place. */
  private keyFor(value: string): string {
    const whole = this.keys.get(value);
    if (whole !== undefined) return whole;
    const bearer = /^(bearer) +(\S+)$/i.exec(value);
    const key = bearer ? this.keys.get(bearer[2]!) : undefined;
    return key !== undefined ? `${bearer![1]} ${key}` : value;
  }

  /** The provider's headers, without one hop's, each key put back to its placeholder. */
  private mask(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
    const out: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined || HOP_HEADERS.has(name)) continue;
      out[name] = Array.isArray(value) ? value.map((one) => this.hide(one)) : this.hide(value);
    }
    return out;
  }

  /**
   * Each key in `value` put back to its placeholder: inside other text only when it is long enough to be no
   * other text's (a key of "json", "x" for a local gateway, would otherwise rewrite `content-type`).
   */
  private hide(value: string): string {
    return hideKeys(
      value,
      [...this.keys].map(([placeholder, key]) => [key, placeholder]),
    );
  }
}

/**
 * `text` with each key put back to its placeholder: as the whole text, or inside it when the key is long
 * enough to be no other text's (a key of "json", "x" for a local gateway, would otherwise rewrite
 * `content-type`, or a `PATH`).
 */
export function hideKeys(
  text: string,
  keys: readonly (readonly [key: string, placeholder: string])[],
): string {
  let hidden = text;
  for (const [key, placeholder] of keys) {
    if (hidden === key) hidden = placeholder;
    else if (key.length >= MIN_KEY_INSIDE) hidden = hidden.split(key).join(placeholder);
  }
  return hidden;
}

/** Where a door sends its requests: fixed when it opens (its base URL, the machine's proxy for that host). */
interface Route {
  origin: string;
  /** The base URL's path, without its trailing slash: put before the agent's. */
  prefix: string;
  /** The Host header: the base URL's host, its port only when not its scheme's. */
  hostHeader: string;
  /** `host:port` (an IPv6 host in brackets): a tunnel's. */
  authority: string;
  secure: boolean;
  host: string;
  port: number;
  /** None for the host's loopback (a local model or gateway, as the egress proxy does) or what NO_PROXY names. */
  proxy: UpstreamProxy | UnusableProxy | undefined;
}

function routeOf(upstream: URL, machine: MachineProxies | undefined): Route {
  const secure = upstream.protocol === "https:";
  const host = upstream.hostname.replace(/^\[|\]$/g, "");
  const port = Number(upstream.port) || (secure ? 443 : 80);
  const proxy = isLoopbackHost(host)
    ? undefined
    : secure
      ? machine?.forTunnel(host, port)
      : machine?.forRequest(host, port);
  return {
    origin: upstream.origin,
    prefix: upstream.pathname.replace(/\/+$/, ""),
    hostHeader: upstream.host,
    authority: formatHostRule({ host, port }),
    secure,
    host,
    port,
    proxy,
  };
}

function refuse(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", connection: "close" });
  res.end(`${message}\n`);
}

/**
 * A path with a `.` or `..` segment — written as such, percent-encoded, with backslashes or `;` parameters
 * (`/..;/`) — which a provider's server or gateway may resolve above the base URL's path prefix.
 */
function leavesPrefix(path: string): boolean {
  const pathname = path.split(/[?#]/, 1)[0] ?? "";
  const plain = pathname.replace(/%2e/gi, ".").replace(/%2f|%5c|\\/gi, "/");
  return plain.split("/").some((segment) => /^\.{1,2}(;.*)?$/.test(segment));
}
