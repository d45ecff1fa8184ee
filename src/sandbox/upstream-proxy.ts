import { connect, type Socket } from "node:net";
import { bypassesProxy, type NoProxyEntry, parseNoProxy } from "../support/no-proxy.js";

/** How long the machine's proxy may take to answer a CONNECT. */
const ANSWER_MS = 30_000;
/** The most of its answer's head read before the tunnel. */
const HEAD_BYTES = 16 * 1024;

/**
 * The machine's own proxy (a company's gateway), named by the environment of the process that runs the
 * egress proxy — the conductor service or a cluster worker, never the agent's. Its user and password are
 * kept in a private field: what it prints (`label`) names its variable, host and port only.
 */
export class UpstreamProxy {
  readonly #authorization: string | undefined;

  constructor(
    /** The variable that names it (`HTTPS_PROXY`, `http_proxy`…). */
    readonly variable: string,
    readonly host: string,
    readonly port: number,
    authorization: string | undefined,
  ) {
    this.#authorization = authorization;
  }

  /** `HTTPS_PROXY (gateway.example:3128)`: no credentials, ever. */
  get label(): string {
    const host = this.host.includes(":") ? `[${this.host}]` : this.host;
    return `${this.variable} (${host}:${this.port})`;
  }

  /** The `Proxy-Authorization` header's value, when the URL names a user. */
  get authorization(): string | undefined {
    return this.#authorization;
  }

  toJSON(): string {
    return this.label;
  }

  toString(): string {
    return this.label;
  }
}

/** A variable that names a proxy caesar cannot chain (an https:// or socks URL, not a URL): why. */
export interface UnusableProxy {
  unusable: string;
}

/** The machine's proxies, read once from an environment: which one a request goes through, if any. */
export class MachineProxies {
  private constructor(
    /** For CONNECT: https_proxy, HTTPS_PROXY, else http_proxy, HTTP_PROXY. */
    private readonly tunnels: UpstreamProxy | UnusableProxy | undefined,
    /** For plain http: http_proxy, HTTP_PROXY. */
    private readonly requests: UpstreamProxy | UnusableProxy | undefined,
    private readonly bypass: readonly NoProxyEntry[],
  ) {}

  static fromEnvironment(env: NodeJS.ProcessEnv): MachineProxies {
    const named = (...names: string[]) => {
      const name = names.find((candidate) => (env[candidate] ?? "").trim() !== "");
      return name ? parseProxyUrl(name, env[name]!.trim()) : undefined;
    };
    return new MachineProxies(
      named("https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY"),
      named("http_proxy", "HTTP_PROXY"),
      parseNoProxy(env.no_proxy?.trim() ? env.no_proxy : env.NO_PROXY),
    );
  }

  /** Whether any proxy is named. */
  get any(): boolean {
    return this.tunnels !== undefined || this.requests !== undefined;
  }

  /** The proxy a CONNECT to `host:port` goes through: undefined when none, or when NO_PROXY names it. */
  forTunnel(host: string, port: number): UpstreamProxy | UnusableProxy | undefined {
    return bypassesProxy(this.bypass, host, port) ? undefined : this.tunnels;
  }

  /** The proxy a plain-http request to `host:port` goes through (see forTunnel). */
  forRequest(host: string, port: number): UpstreamProxy | UnusableProxy | undefined {
    return bypassesProxy(this.bypass, host, port) ? undefined : this.requests;
  }

  /** What `caesar doctor` says of them (no credentials). */
  describe(): { tunnels: string | null; requests: string | null; problems: string[] } {
    const say = (proxy: UpstreamProxy | UnusableProxy | undefined) =>
      proxy === undefined ? null : "unusable" in proxy ? null : proxy.label;
    const problems = [this.tunnels, this.requests]
      .filter((proxy): proxy is UnusableProxy => proxy !== undefined && "unusable" in proxy)
      .map((proxy) => proxy.unusable);
    return { tunnels: say(this.tunnels), requests: say(this.requests), problems: [...new Set(problems)] };
  }
}

/**
 * A proxy URL: `http://[user:password@]host[:port]` (no scheme is http; the port defaults to 80). An
 * https:// proxy (TLS to the proxy itself) or a SOCKS one is not chained: why, naming the variable and
 * never its value (which may hold a password).
 */
export function parseProxyUrl(variable: string, value: string): UpstreamProxy | UnusableProxy {
  const unusable = (why: string): UnusableProxy => ({
    unusable: `${variable} ${why}; caesar's egress proxy chains a plain http:// proxy only (http://[user:password@]host:port)`,
  });
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`);
  } catch {
    return unusable("is not a URL");
  }
  if (url.protocol === "https:")
    return unusable(`names an https:// proxy (${url.host}): TLS to the proxy is not spoken`);
  if (url.protocol !== "http:")
    return unusable(`names a ${url.protocol.replace(/:$/, "")} proxy (${url.host})`);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (host === "") return unusable("names no host");
  let authorization: string | undefined;
  if (url.username || url.password) {
    try {
      const user = decodeURIComponent(url.username);
      const password = decodeURIComponent(url.password);
      authorization = `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
    } catch {
      return unusable("names a user or password that is not well percent-encoded");
    }
  }
  return new UpstreamProxy(variable, host, Number(url.port || 80), authorization);
}

/** The machine's proxy did not open the tunnel: its answer's status, or why it could not be asked. */
export class UpstreamFailure extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/**
 * A tunnel to `authority` (`host:port`, `[v6]:port`) through the machine's proxy: a CONNECT with its
 * credentials, resolved once it answers 2xx with the socket and what came after its answer's head;
 * rejected with an UpstreamFailure (its status, or why it could not be reached) otherwise. `abort` ends it.
 */
export function openTunnel(
  proxy: UpstreamProxy,
  authority: string,
): { tunnel: Promise<{ socket: Socket; rest: Buffer }>; abort: () => void } {
  const socket = connect({ host: proxy.host, port: proxy.port });
  let settled = false;
  let stop: (message: string, status?: number) => void = () => undefined;
  const tunnel = new Promise<{ socket: Socket; rest: Buffer }>((resolve, reject) => {
    stop = (message: string, status?: number) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      reject(new UpstreamFailure(message, status));
    };
    const timer = setTimeout(
      () => stop(`the machine's proxy, ${proxy.label}, did not answer within ${ANSWER_MS / 1000} s`),
      ANSWER_MS,
    );
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) {
        if (head.length > HEAD_BYTES)
          stop(`the machine's proxy, ${proxy.label}, answered with too long a head`);
        return;
      }
      const line = head.subarray(0, head.indexOf("\r\n")).toString("latin1");
      const status = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(line);
      if (!status) {
        stop(`the machine's proxy, ${proxy.label}, answered something other than HTTP`);
        return;
      }
      const code = Number(status[1]);
      // Its words are passed on, printable and short: the proxy is the machine's, its answer anyone's text.
      const reason = (status[2] ?? "").replace(/[^\x20-\x7e]/g, "").slice(0, 100);
      if (code < 200 || code > 299) {
        stop(`the machine's proxy, ${proxy.label}, answered ${code}${reason ? ` ${reason}` : ""}`, code);
        return;
      }
      settled = true;
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("error", onError);
      socket.off("close", onClose);
      resolve({ socket, rest: head.subarray(end + 4) });
    };
    const onError = (error: Error) =>
      stop(`the machine's proxy, ${proxy.label}, could not be reached: ${error.message}`);
    const onClose = () =>
      stop(`the machine's proxy, ${proxy.label}, closed the connection without answering`);
    socket.on("data", onData);
    socket.on("error", onError);
    socket.on("close", onClose);
    socket.once("connect", () => {
      const credentials = proxy.authorization ? `Proxy-Authorization: ${proxy.authorization}\r\n` : "";
      socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${credentials}\r\n`);
    });
  });
  const abort = () => stop("the agent went before the machine's proxy answered");
  // Its caller may have gone (and aborted it): a rejection nobody awaits is no unhandled one.
  tunnel.catch(() => undefined);
  return { tunnel, abort };
}

/** A name or address that may be written into a request to the machine's proxy as it is. */
export function isPlainHost(host: string): boolean {
  return /^[a-z0-9_.-]+$/i.test(host) || /^[0-9a-f:.]+$/i.test(host);
}
