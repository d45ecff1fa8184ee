import { createServer as createHttpServer, type IncomingMessage, type Server } from "node:http";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EgressProxy, type EgressRefusal, PROXY_SOCKET } from "../../src/sandbox/egress-proxy.js";
import { MachineProxies } from "../../src/sandbox/upstream-proxy.js";
import { parseHostRules } from "../../src/support/host-rules.js";
import { tempDir } from "../helpers/repo.js";
import { itWith } from "../helpers/system-deps.js";
import { closedAfterEach, countingEgress, listening as serveOnLoopback } from "./egress-lab.js";
import { BUBBLEWRAP, project, run } from "./probe-project.js";

// The chain to a machine's proxy as an attacker inside the sandbox sees it: names spelled to slip past the
// loopback rule, methods a gateway answers itself, URLs that carry more than a host.

const closers = closedAfterEach();

const listening = (server: Server) => serveOnLoopback(server, closers);

interface Asked {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
}

/**
 * A gateway that records what it is asked and answers everything itself: a CONNECT with a 200 (then
 * closes), a TRACE as RFC 9110 lets its final recipient (the message it received, echoed), anything else
 * 200 `gateway`.
 */
async function gateway(): Promise<{ port: number; asked: Asked[] }> {
  const asked: Asked[] = [];
  const server = createHttpServer((req, res) => {
    asked.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    if (req.method === "TRACE") {
      const echoed = `${req.method} ${req.url} HTTP/1.1\r\n${Object.entries(req.headers)
        .map(([name, value]) => `${name}: ${String(value)}`)
        .join("\r\n")}\r\n\r\n`;
      res.writeHead(200, { "content-type": "message/http", connection: "close" });
      res.end(echoed);
      return;
    }
    res.writeHead(200, { connection: "close" });
    res.end("gateway\n");
  });
  server.on("connect", (req: IncomingMessage, client: Socket) => {
    client.on("error", () => undefined);
    asked.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    client.end("HTTP/1.1 200 Connection established\r\n\r\nfrom the gateway\n");
  });
  return { port: await listening(server), asked };
}

async function proxyOf(
  rules: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ proxy: EgressProxy; refused: EgressRefusal[] }> {
  const refused: EgressRefusal[] = [];
  const proxy = new EgressProxy(
    join(tempDir("caesar-egress-chain-audit-"), "egress"),
    parseHostRules(rules),
    (refusal) => refused.push(refusal),
    { upstream: MachineProxies.fromEnvironment(env) },
  );
  await proxy.listen();
  closers.push(() => proxy.close());
  return { proxy, refused };
}

/** All the proxy answers to `text`, sent raw on its socket. */
function exchange(proxy: { folder: string }, text: string, waitMs = 5000): Promise<string> {
  return new Promise((done) => {
    const socket = connect(join(proxy.folder, PROXY_SOCKET));
    let all = "";
    socket.on("connect", () => socket.write(text));
    socket.on("data", (chunk: Buffer) => (all += chunk));
    socket.on("error", () => undefined);
    socket.on("close", () => done(all));
    setTimeout(() => socket.destroy(), waitMs);
  });
}

describe("an agent against the chain to a machine's proxy", () => {
  it("a loopback rule's name spelled with a trailing dot or in capitals is the host's loopback, never the gateway's", async () => {
    const gw = await gateway();
    const env = { HTTPS_PROXY: `http://127.0.0.1:${gw.port}`, HTTP_PROXY: `http://127.0.0.1:${gw.port}` };
    const { proxy } = await proxyOf(["localhost:11434"], env);
    const answers = [
      await exchange(proxy, "CONNECT localhost.:11434 HTTP/1.1\r\nHost: localhost.:11434\r\n\r\n"),
      await exchange(proxy, "CONNECT LOCALHOST.:11434 HTTP/1.1\r\nHost: localhost.:11434\r\n\r\n"),
      await exchange(
        proxy,
        "GET http://LocalHost.:11434/ HTTP/1.1\r\nHost: localhost.:11434\r\nConnection: close\r\n\r\n",
      ),
    ];
    for (const answer of answers) expect(answer).not.toContain("gateway");
    expect(gw.asked).toEqual([]);
  });

  it("a TRACE a gateway answers itself (Max-Forwards: 0) echoes no credentials: it is not sent to the gateway", async () => {
    const gw = await gateway();
    const url = `http://jane:hunter2@127.0.0.1:${gw.port}`;
    const { proxy } = await proxyOf(["api.model.test"], { HTTPS_PROXY: url, HTTP_PROXY: url });
    const traced = await exchange(
      proxy,
      "TRACE http://api.model.test/ HTTP/1.1\r\nHost: api.model.test\r\nMax-Forwards: 0\r\nConnection: close\r\n\r\n",
    );
    expect(traced.split("\r\n")[0]).toBe("HTTP/1.1 405 Method Not Allowed");
    expect(traced).not.toContain(Buffer.from("jane:hunter2").toString("base64"));
    expect(gw.asked).toEqual([]);
  });

  it("the URL sent to the gateway names only the host the decision was made on: no user, no fragment", async () => {
    const gw = await gateway();
    const url = `http://127.0.0.1:${gw.port}`;
    const { proxy } = await proxyOf(["api.model.test"], { HTTPS_PROXY: url, HTTP_PROXY: url });
    for (const target of [
      "http://evil.example:x@api.model.test/a?b=1",
      "http://api.model.test/a?b=1#@evil.example/",
    ])
      await exchange(proxy, `GET ${target} HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n`);
    expect(gw.asked.map((asked) => [asked.url, asked.headers.host])).toEqual([
      ["http://api.model.test/a?b=1", "api.model.test"],
      ["http://api.model.test/a?b=1", "api.model.test"],
    ]);
  });
});

describe("a sandboxed agent's environment behind a machine's proxy", () => {
  itWith(
    BUBBLEWRAP,
    "names no proxy of the machine's with its credentials: not ALL_PROXY, FTP_PROXY, nor a tool's own proxy variable",
    async () => {
      const root = project(`env | grep -i proxy | sed 's/^/ENV /'`, "required", `allow_hosts = []`);
      const url = "http://corp:s3cret-gw@gw.corp.test:3128";
      const result = await run(root, ["--network", "on", "--mode", "write"], {
        HTTPS_PROXY: url,
        HTTP_PROXY: url,
        ALL_PROXY: url,
        all_proxy: url,
        FTP_PROXY: "corp:s3cret-gw@gw.corp.test:3128",
        npm_config_https_proxy: url,
        NO_PROXY: "",
        no_proxy: "",
      });
      expect(result.raw).toContain("ENV HTTPS_PROXY=http://127.0.0.1:");
      expect(result.raw).not.toContain("s3cret-gw");
    },
  );
});

describe("the service's log against endless hosts its machine's proxy does not open", () => {
  it("past the 20 on record, they are counted in the log, not written one line each", async () => {
    const saved = process.env.HTTPS_PROXY;
    // A proxy caesar cannot chain: every allowed host is a 502 recorded as the machine's proxy's.
    process.env.HTTPS_PROXY = "https://gw.corp.test:3128";
    closers.push(() => {
      if (saved === undefined) delete process.env.HTTPS_PROXY;
      else process.env.HTTPS_PROXY = saved;
    });
    const { proxy, events: counted, lines } = await countingEgress("t_upstream_flood", ["*"], closers);
    for (let i = 0; i < 1500; i += 50)
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          exchange(proxy, `CONNECT h${(i + j) % 100}.example:443 HTTP/1.1\r\n\r\n`),
        ),
      );
    expect(counted()).toBeLessThanOrEqual(21);
    expect(lines.length).toBeLessThanOrEqual(3);
  });
});
