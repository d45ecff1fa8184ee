import { lookup, Resolver } from "node:dns/promises";
import { chmod, mkdir, rm } from "node:fs/promises";
import {
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
  type HostRule,
  isInternalAddress,
  isLoopbackHost,
  loopbackPorts,
  matchHost,
} from "../support/host-rules.js";

/** Where, in an egress folder, the proxy listens; a loopback port `<n>` is served at `port-<n>.sock`. */
export const PROXY_SOCKET = "proxy.sock";
export const portSocket = (port: number) => `port-${port}.sock`;

const INTERNAL = "it resolves to an address of the host's own networks, which only a rule naming it opens";

/** Connections one task may hold open at once through its proxy (the peer is untrusted). */
const MAX_CONNECTIONS = 256;

interface ForwardSlot {
  upstream?: ClientRequest;
  released: boolean;
  release: () => void;
}

export interface EgressRefusal {
  host: string;
  port: number;
  why: string;
}

/**
 * A sandboxed task's only way out to the network: an HTTP proxy (CONNECT for TLS, absolute-form requests
 * for plain http) on a Unix socket in a folder only that task's sandbox has bound, which connects to a host
 * only when the task's rules allow it — after resolving it itself, so that a wildcard never reaches the
 * host's own loopback or private network, and connecting to the address it checked. Loopback ports the
 * rules name (a local model server) are forwarded as they are, each on a socket of its own. Inside, a relay
 * (relay.ts) serves these sockets on the sandbox's loopback. Every refusal is reported to `onRefused`.
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

  /** `CONNECT host:port`: a tunnel to an allowed host, else 403 saying why. */
  private async tunnel(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    const target = splitAuthority(req.url ?? "");
    const address = target && (await this.resolve(target.host, target.port));
    if (!target || typeof address !== "object") {
      client.end(refusalResponse(typeof address === "string" ? address : `"${req.url}" is not host:port`));
      return;
    }
    // The client may have gone while its host was resolved: nothing to connect for.
    if (client.destroyed) return;
    const upstream = connect(target.port, address.address);
    this.track(upstream);
    const gone = () => upstream.destroy();
    client.once("close", gone);
    upstream.once("connect", () => {
      client.off("close", gone);
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      this.splice(client, upstream, head);
    });
    upstream.once("error", (error) => {
      client.end(`HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n${error.message}\n`);
    });
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
      if (!res.writableFinished) slot.upstream?.destroy();
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
    const address = await this.resolve(url.hostname.replace(/^\[|\]$/g, ""), port);
    if (typeof address === "string") {
      res.writeHead(403, { "content-type": "text/plain", connection: "close" });
      res.end(`${address}\n`);
      return;
    }
    if (slot.released) return; // its client went while its host was being resolved
    const headers = { ...req.headers };
    delete headers["proxy-connection"];
    delete headers["proxy-authorization"];
    const upstream = request({
      host: address.address,
      port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers: { ...headers, host: url.host },
      setHost: false,
      // A connection of this request's own: no pool shared with other tasks (or the rest of the service).
      agent: false,
    });
    slot.upstream = upstream;
    upstream.on("response", (answer) => {
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
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain", connection: "close" });
      res.end(`${error.message}\n`);
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

  /** The address to connect to for `host:port`, or why not (reported as a refusal). */
  private async resolve(host: string, port: number): Promise<{ address: string } | string> {
    const refuse = (why: string) => {
      this.onRefused({ host, port, why });
      return `caesar's sandbox refused ${host}:${port}: ${why}.`;
    };
    const match = matchHost(this.rules, host, port);
    if (!match) return refuse("not among the task's allowed hosts ([sandbox] allow_hosts)");
    if (match === "wildcard" && isLoopbackHost(host)) return refuse(INTERNAL);
    let addresses: { address: string }[];
    try {
      addresses = isIP(host)
        ? [{ address: host }]
        : match === "wildcard"
          ? await resolveByDns(host)
          : await lookup(host, { all: true });
    } catch (error) {
      return `caesar's sandbox could not resolve ${host}: ${(error as Error).message}`;
    }
    // A wildcard names no address of the machine's own networks; a name that resolves there is refused.
    const usable =
      match === "named" ? addresses : addresses.filter((entry) => !isInternalAddress(entry.address));
    if (usable.length === 0) return refuse(INTERNAL);
    return usable[0]!;
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
async function resolveByDns(host: string): Promise<{ address: string }[]> {
  const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
  const addresses = [
    ...(v4.status === "fulfilled" ? v4.value : []),
    ...(v6.status === "fulfilled" ? v6.value : []),
  ];
  if (addresses.length === 0) throw v4.status === "rejected" ? v4.reason : new Error("no address");
  return addresses.map((address) => ({ address }));
}

function refusalResponse(message: string): string {
  const body = `${message}\n`;
  return `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/** `host:port` or `[v6]:port` of a CONNECT request. */
function splitAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(authority);
  if (!match) return undefined;
  const port = Number(match[3]);
  if (port < 1 || port > 65535) return undefined;
  return { host: (match[1] ?? match[2]!).toLowerCase(), port };
}
