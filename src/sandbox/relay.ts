import { shellQuote } from "../support/shell-quote.js";
import { PROXY_SOCKET, portSocket } from "./egress-proxy.js";

/** Where a task's egress folder is bound inside its sandbox (read-only: a socket connects all the same). */
export const EGRESS_INSIDE = "/tmp/.caesar-egress";

/** The program that serves the egress sockets on the sandbox's loopback. */
export type RelayProgram = { kind: "socat"; path: string } | { kind: "node"; path: string };

/** A relay of Node's own, for a machine without socat: each `port=socket` pair, served on 127.0.0.1. */
const NODE_RELAY = [
  'const net = require("node:net");',
  "for (const pair of process.argv.slice(1)) {",
  '  const at = pair.indexOf("=");',
  "  net.createServer((inside) => {",
  "    const out = net.connect(pair.slice(at + 1));",
  "    const end = () => { inside.destroy(); out.destroy(); };",
  '    inside.on("error", end); out.on("error", end); inside.on("close", end); out.on("close", end);',
  "    inside.pipe(out); out.pipe(inside);",
  '  }).listen(Number(pair.slice(0, at)), "127.0.0.1");',
  "}",
].join("\n");

export interface RelayPlan {
  /** The port of the proxy inside the sandbox (HTTP_PROXY, HTTPS_PROXY). */
  proxyPort: number;
  /** Loopback ports forwarded as they are (a model server on the host's loopback). */
  ports: number[];
  /** Other sockets of the egress folder (key doors: key-door.ts), each served on a port of its own. */
  served: { port: number; socket: string }[];
}

/**
 * The proxy's port inside: 3128, or the next one no forwarded port takes; each other socket of the folder
 * (`sockets`, in order) on the next free one after it.
 */
export function relayPlan(ports: readonly number[], sockets: readonly string[] = []): RelayPlan {
  const taken = new Set(ports);
  const next = (from: number) => {
    let port = from;
    while (taken.has(port)) port++;
    taken.add(port);
    return port;
  };
  const proxyPort = next(3128);
  const served = sockets.map((socket) => ({ port: next(proxyPort + 1), socket }));
  return { proxyPort, ports: [...ports], served };
}

/**
 * The command that runs inside the sandbox, before the agent's: `sh -c` starts the relay (each port of the
 * sandbox's loopback to its socket in the egress folder), waits until it listens (/proc/net/tcp, at most
 * 3 s), then `exec`s the agent — which takes the shell's place, so its exit status and signals are its own.
 * The relay dies with the sandbox.
 */
export function relayCommand(plan: RelayPlan, relay: RelayProgram, agent: string[]): string[] {
  const pairs = [
    { port: plan.proxyPort, socket: `${EGRESS_INSIDE}/${PROXY_SOCKET}` },
    ...plan.ports.map((port) => ({ port, socket: `${EGRESS_INSIDE}/${portSocket(port)}` })),
    ...plan.served.map(({ port, socket }) => ({ port, socket: `${EGRESS_INSIDE}/${socket}` })),
  ];
  const start =
    relay.kind === "socat"
      ? pairs.map(
          ({ port, socket }) =>
            `${shellQuote(relay.path)} TCP-LISTEN:${port},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${socket} </dev/null >/dev/null 2>&1 &`,
        )
      : [
          `${shellQuote(relay.path)} -e ${shellQuote(NODE_RELAY)} ${pairs.map(({ port, socket }) => `${port}=${socket}`).join(" ")} </dev/null >/dev/null 2>&1 &`,
        ];
  const listening = pairs
    .map(
      ({ port }) =>
        `grep -q ' 0100007F:${port.toString(16).toUpperCase().padStart(4, "0")} 00000000:0000 0A' /proc/net/tcp`,
    )
    .join(" && ");
  const script = [
    ...start,
    "i=0",
    `while [ "$i" -lt 300 ] && ! { ${listening}; }; do i=$((i+1)); sleep 0.01; done`,
    'exec "$@"',
  ].join("\n");
  return ["/bin/sh", "-c", script, "caesar-egress", ...agent];
}

/** The variables that send an agent's HTTP(S) through the relay; loopback stays direct (forwarded ports). */
export function proxyEnvironment(plan: RelayPlan): Record<string, string> {
  const url = `http://127.0.0.1:${plan.proxyPort}`;
  const direct = "localhost,127.0.0.1,::1";
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    NO_PROXY: direct,
    no_proxy: direct,
  };
}
