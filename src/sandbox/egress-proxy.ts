import { lookup, Resolver } from "node:dns/promises";
import { chmod, mkdir, rm } from "node:fs/promises";
import {
  Agent,
  type ClientRequest,
  createServer as createHttpServer,
  type IncomingMessage,
  request,
  type ServerResponse,
} from "node:http";
import { connect, createServer, isIP, type Server, type Socket } from "node:net";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import {
  formatHostRule,
  type HostRule,
  isInternalAddress,
  isLoopbackHost,
  loopbackPorts,
  matchHost,
} from "../support/host-rules.js";
import { connectAny } from "./connect-any.js";
import { isPlainHost, type MachineProxies, openTunnel, type UpstreamProxy } from "./upstream-proxy.js";

/** Where, in an egress folder, the proxy listens; a loopback port `<n>` is served at `port-<n>.sock`. */
export const PROXY_SOCKET = "proxy.sock";
export const portSocket = (port: number) => `port-${port}.sock`;

const INTERNAL = "it resolves to an address of the host's own networks, which only a rule naming it opens";

/** Connections one task may hold open at once through its proxy (the peer is untrusted). */
const MAX_CONNECTIONS = 256;

interface ForwardSlot {
  upstream?: ClientRequest;
  /** Ends the connection being opened for it, if any. */
  abort?: () => void;
  released: boolean;
  release: () => void;
}

export interface EgressRefusal {
  host: string;
  port: number;
  why: string;
  /** The task's rules allowed it; the machine's proxy (HTTPS_PROXY…) refused it or could not be asked. */
  upstream?: boolean;
}

export interface EgressOptions {
  /**
   * The machine's proxies (a company's gateway), read from the environment of the process that runs this
   * proxy, never the agent's: allowed traffic goes through them, unless NO_PROXY names its host or the host
   * is the host's loopback. None: every host is connected to directly.
   */
  upstream?: MachineProxies;
  /** Tests only: the addresses of a name, in place of the DNS (`dns`, a wildcard's) or getaddrinfo (`system`). */
  resolveName?: (host: string, how: "dns" | "system") => Promise<string[]>;
}

/** Where an allowed host is reached: one of its checked addresses, or through the machine's proxy by name. */
type Route = { addresses: string[] } | { upstream: UpstreamProxy };
/** Why not: the answer's status (403 refused by the rules, 502 the machine's proxy) and its words. */
type Stop = { status: 403 | 502; message: string };

/**
 * A sandboxed task's only way out to the network: an HTTP proxy (CONNECT for TLS, absolute-form requests
 * for plain http) on a Unix socket in a folder only that task's sandbox has bound, which connects to a host
 * only when the task's rules allow it — after resolving it itself, so that a wildcard never reaches the
 * host's own loopback or private network, and connecting to an address it checked (the first of them that
 * answers). Behind a machine's proxy (`options.upstream`), allowed traffic goes through it instead, by the
 * name the agent asked for (see route). Loopback ports the rules name (a local model server) are forwarded
 * as they are, each on a socket of its own, never through a machine's proxy. Inside, a relay (relay.ts)
 * serves these sockets on the sandbox's loopback. Every refusal is reported to `onRefused`, and so is each
 * allowed host a machine's proxy would not open.
 */
export class EgressProxy {
  private readonly servers: Server[] = [];
  private readonly sockets = new Set<Duplex>();
  /** Plain-http requests being forwarded: pipelined on one connection, they are not bounded by it. */
  private forwarding = 0;
  /** Each client connection's forwarded requests, ended with it. */
  private readonly forwarded = new WeakMap<Duplex, Set<ForwardSlot>>();

  constructor(
    readonly folder: string,
    private readonly rules: readonly HostRule[],
    private readonly onRefused: (refusal: EgressRefusal) => void,
    private readonly options: EgressOptions = {},
  ) {}

  /** The loopback ports forwarded as they are. */
  get ports(): number[] {
    return loopbackPorts(this.rules);
  }

  async listen(): Promise<void> {
    await mkdir(this.folder, { recursive: true, mode: 0o700 });
    await chmod(this.folder, 0o700);
    const proxy = createHttpServer((req, res) => void this.forward(req, res));
    proxy.on(
      "connect",
      (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.tunnel(req, socket, head),
    );
    proxy.on("connection", (socket: Socket) => {
      this.track(socket);
      socket.once("close", () => {
        for (const slot of [...(this.forwarded.get(socket) ?? [])]) {
          slot.upstream?.destroy();
          slot.abort?.();
          slot.release();
        }
      });
    });
    proxy.on("clientError", (_error, socket) => socket.destroy());
    await this.serve(proxy, join(this.folder, PROXY_SOCKET));
    for (const port of this.ports) {
      const forward = createServer((socket) => {
        this.track(socket);
        const upstream = connect(port, "127.0.0.1");
        this.splice(socket, upstream, Buffer.alloc(0));
      });
      await this.serve(forward, join(this.folder, portSocket(port)));
    }
  }

  close(): void {
    for (const server of this.servers) server.close();
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  private async serve(server: Server, path: string): Promise<void> {
    await rm(path, { force: true });
    server.maxConnections = MAX_CONNECTIONS;
    await new Promise<void>((done, fail) => {
      server.once("error", fail);
      server.listen(path, () => done());
    });
    server.on("error", () => undefined);
    await chmod(path, 0o600);
    this.servers.push(server);
  }

  private track(socket: Duplex): void {
    this.sockets.add(socket);
    socket.on("close", () => this.sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  }

  /** `CONNECT host:port`: a tunnel to an allowed host, else 403 saying why (502: it could not be opened). */
  private async tunnel(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    const target = splitAuthority(req.url ?? "");
    if (!target) {
      client.end(answer(403, `"${req.url}" is not host:port`));
      return;
    }
    const route = await this.route(target.host, target.port, "tunnel");
    if ("status" in route) {
      client.end(answer(route.status, route.message));
      return;
    }
    // The client may have gone while its host was resolved: nothing to connect for.
    if (client.destroyed) return;
    const authority = formatHostRule(target);
    const opening =
      "upstream" in route
        ? openTunnel(route.upstream, authority)
        : directTunnel(route.addresses, target.port);
    const gone = () => opening.abort();
    client.once("close", gone);
    let opened: { socket: Socket; rest: Buffer };
    try {
      opened = await opening.tunnel;
    } catch (error) {
      if (client.destroyed) return;
      const why = (error as Error).message;
      const stop = "upstream" in route ? this.upstreamFailed(target.host, target.port, why) : why;
      client.end(answer(502, stop));
      return;
    } finally {
      client.off("close", gone);
    }
    if (client.destroyed) {
      opened.socket.destroy();
      return;
    }
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (opened.rest.length > 0) client.write(opened.rest);
    this.splice(client, opened.socket, head);
  }

  /** A plain-http request in absolute form, to an allowed host; the response streamed back. */
  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.forwarding >= MAX_CONNECTIONS) {
      res.writeHead(503, { "content-type": "text/plain", connection: "close" });
      res.end("caesar's sandbox proxy is forwarding as many requests as it takes at once.\n");
      return;
    }
    // One request at a time on a connection: requests pipelined behind one not yet answered would each
    // open an upstream connection, and Node reads nothing more of a connection that many are queued on —
    // not even its end. No client of an HTTP proxy pipelines: such a connection is dropped, with its requests.
    if (this.forwarded.get(req.socket)?.size) {
      req.socket.destroy();
      return;
    }
    // A place taken now, given back when its answer is done, or its client's connection goes (which
    // takes its upstream request along).
    const slot = this.takeSlot(req.socket);
    res.once("close", () => {
      if (!res.writableFinished) {
        slot.upstream?.destroy();
        slot.abort?.();
      }
      slot.release();
    });
    let url: URL;
    try {
      url = new URL(req.url ?? "");
      if (url.protocol !== "http:") throw new Error("not http");
    } catch {
      res.writeHead(400, { "content-type": "text/plain", connection: "close" });
      res.end("caesar's sandbox proxy takes CONNECT host:port, or a request for an absolute http:// URL.\n");
      return;
    }
    const port = Number(url.port || 80);
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const route = await this.route(host, port, "request");
    if ("status" in route) {
      res.writeHead(route.status, { "content-type": "text/plain", connection: "close" });
      res.end(`${route.message}\n`);
      return;
    }
    if (slot.released) return; // its client went while its host was being resolved
    const via = "upstream" in route ? route.upstream : undefined;
    // A TRACE's answer is the request its last recipient received: with Max-Forwards: 0 that is the
    // machine's proxy, whose reflection would carry the service's Proxy-Authorization back to the agent.
    if (via && req.method === "TRACE") {
      res.writeHead(405, {
        "content-type": "text/plain",
        allow: "GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH",
        connection: "close",
      });
      res.end("caesar's sandbox proxy sends no TRACE through the machine's proxy.\n");
      return;
    }
    const headers = { ...req.headers };
    delete headers["proxy-connection"];
    // The agent's credentials for a proxy are never passed on: the machine's proxy gets the service's.
    delete headers["proxy-authorization"];
    if (via?.authorization) headers["proxy-authorization"] = via.authorization;
    const opening = via ? undefined : connectAny((route as { addresses: string[] }).addresses, port);
    slot.abort = opening?.abort;
    const upstream = request({
      host: via ? via.host : host,
      port: via ? via.port : port,
      method: req.method,
      // To the machine's proxy, the absolute form of the URL the decision was made on: its host, path and
      // query only — no user (`http://other:x@host/`) nor fragment (`#@other/`) that a gateway could read
      // its host from.
      path: via ? `http://${url.host}${url.pathname}${url.search}` : `${url.pathname}${url.search}`,
      headers: { ...headers, host: url.host },
      setHost: false,
      // A connection of this request's own: no pool shared with other tasks (or the rest of the service).
      agent: opening ? agentOf(opening.socket) : false,
    });
    slot.upstream = upstream;
    upstream.on("response", (answer) => {
      // 407: the machine's proxy wants credentials — the service's to give, not the agent's (whose proxy
      // caesar's is, and asks none).
      if (via && answer.statusCode === 407) {
        answer.resume();
        res.writeHead(502, { "content-type": "text/plain", connection: "close" });
        res.end(`${this.upstreamFailed(host, port, `the machine's proxy, ${via.label}, answered 407`)}\n`);
        return;
      }
      // The upstream is anyone's server: an answer Node will not write back (a status below 100, say)
      // throws here, in the conductor service that conducts every task — a 502 instead.
      try {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      } catch (error) {
        upstream.destroy();
        res.writeHead(502, { "content-type": "text/plain", connection: "close" });
        res.end(`caesar's sandbox proxy cannot pass the answer on: ${(error as Error).message}\n`);
        return;
      }
      answer.pipe(res);
    });
    upstream.on("error", (error) => {
      let message = error.message;
      if (!res.headersSent) {
        if (via && !slot.released)
          message = this.upstreamFailed(host, port, `the machine's proxy, ${via.label}, failed: ${message}`);
        res.writeHead(502, { "content-type": "text/plain", connection: "close" });
      }
      res.end(`${message}\n`);
    });
    req.pipe(upstream);
  }

  /** One of the places of forwarded requests, held for a request of `socket` (see forward). */
  private takeSlot(socket: Duplex): ForwardSlot {
    this.forwarding++;
    const slots = this.forwarded.get(socket) ?? new Set<ForwardSlot>();
    this.forwarded.set(socket, slots);
    const slot: ForwardSlot = {
      released: false,
      release: () => {
        if (slot.released) return;
        slot.released = true;
        this.forwarding--;
        slots.delete(slot);
      },
    };
    slots.add(slot);
    if (socket.destroyed) slot.release();
    return slot;
  }

  /**
   * Where to reach `host:port` (a tunnel's or a plain-http request's), or why not — each refusal reported.
   * The decision is made on the name the agent asked for, by the task's rules, before any machine's proxy
   * is considered. Directly, the name is resolved here and only its checked addresses are tried (a
   * wildcard's: its public ones). Through the machine's proxy, which resolves the name again itself, a
   * named host goes by name; a wildcard's must resolve here, to public addresses only.
   */
  private async route(host: string, port: number, kind: "tunnel" | "request"): Promise<Route | Stop> {
    const refuse = (why: string): Stop => {
      this.onRefused({ host, port, why });
      return { status: 403, message: `caesar's sandbox refused ${host}:${port}: ${why}.` };
    };
    const match = matchHost(this.rules, host, port);
    if (!match) return refuse("not among the task's allowed hosts ([sandbox] allow_hosts)");
    if (match === "wildcard" && isLoopbackHost(host)) return refuse(INTERNAL);
    // The host's own loopback (a local model server) is never the machine's proxy's to reach.
    const machine = this.options.upstream;
    const upstream = isLoopbackHost(host)
      ? undefined
      : kind === "tunnel"
        ? machine?.forTunnel(host, port)
        : machine?.forRequest(host, port);
    if (upstream && "unusable" in upstream)
      return { status: 502, message: this.upstreamFailed(host, port, upstream.unusable) };
    if (upstream && !isPlainHost(host)) return refuse("not a host name the machine's proxy can be asked for");
    if (upstream && match === "named") return { upstream };
    let addresses: string[];
    try {
      addresses = isIP(host) ? [host] : await this.addressesOf(host, match === "wildcard" ? "dns" : "system");
    } catch (error) {
      const why = (error as Error).message;
      // A wildcard's name that does not resolve here is not sent on to be resolved elsewhere.
      return upstream
        ? refuse(
            `it does not resolve here (${why}), and a wildcard's host goes to the machine's proxy only once checked`,
          )
        : { status: 403, message: `caesar's sandbox could not resolve ${host}: ${why}` };
    }
    if (upstream) return addresses.some(isInternalAddress) ? refuse(INTERNAL) : { upstream };
    // A wildcard names no address of the machine's own networks; a name that resolves there is refused.
    const usable = match === "named" ? addresses : addresses.filter((address) => !isInternalAddress(address));
    if (usable.length === 0) return refuse(INTERNAL);
    return { addresses: usable };
  }

  /** The machine's proxy did not let an allowed host through: reported, and the agent's 502 says why. */
  private upstreamFailed(host: string, port: number, why: string): string {
    this.onRefused({ host, port, why, upstream: true });
    return `caesar's sandbox could not reach ${host}:${port} through the machine's proxy: ${why}.`;
  }

  private addressesOf(host: string, how: "dns" | "system"): Promise<string[]> {
    if (this.options.resolveName) return this.options.resolveName(host, how);
    if (how === "dns") return resolveByDns(host);
    return lookup(host, { all: true }).then((entries) => entries.map((entry) => entry.address));
  }

  private splice(client: Duplex, upstream: Socket, head: Buffer): void {
    this.track(upstream);
    if (head.length > 0) upstream.write(head);
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("close", end);
    upstream.on("close", end);
  }
}

/**
 * A wildcard's host, asked of the DNS itself (c-ares, with a timeout) rather than getaddrinfo: each lookup
 * holds one of the four threads of libuv's pool, which the whole conductor service shares (every task's
 * proxy, the file system), so names whose servers never answer — the agent picks them — would stall it.
 * No /etc/hosts either: names there are the machine's own, which only a rule naming them opens.
 */
const resolver = new Resolver({ timeout: 2500, tries: 2 });
async function resolveByDns(host: string): Promise<string[]> {
  const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
  const addresses = [
    ...(v4.status === "fulfilled" ? v4.value : []),
    ...(v6.status === "fulfilled" ? v6.value : []),
  ];
  if (addresses.length === 0) throw v4.status === "rejected" ? v4.reason : new Error("no address");
  return addresses;
}

/** A tunnel's connection to the first of `addresses` that answers (connect-any.ts). */
function directTunnel(
  addresses: string[],
  port: number,
): { tunnel: Promise<{ socket: Socket; rest: Buffer }>; abort: () => void } {
  const { socket, abort } = connectAny(addresses, port);
  return { tunnel: socket.then((connected) => ({ socket: connected, rest: Buffer.alloc(0) })), abort };
}

/**
 * An agent of one request, whose one connection is `socket` (the first checked address that answered:
 * connect-any.ts). Not kept alive, as any agent of Node's default: the request says `Connection: close`
 * and its socket ends with its answer.
 */
function agentOf(socket: Promise<Socket>): Agent {
  const agent = new Agent();
  agent.createConnection = (_options, done) => {
    socket.then(
      (connected) => done?.(null, connected),
      (error: Error) => done?.(error, undefined as unknown as Socket),
    );
    return undefined;
  };
  return agent;
}

function answer(status: 403 | 502, message: string): string {
  const body = `${message}\n`;
  const reason = status === 403 ? "Forbidden" : "Bad Gateway";
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/** `host:port` or `[v6]:port` of a CONNECT request. */
function splitAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(authority);
  if (!match) return undefined;
  const port = Number(match[3]);
  if (port < 1 || port > 65535) return undefined;
  return { host: (match[1] ?? match[2]!).toLowerCase(), port };
}
