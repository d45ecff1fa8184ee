import { createServer as createHttpServer } from "node:http";
import { connect, createServer, type Server } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EgressProxy, type EgressRefusal, PROXY_SOCKET } from "../../src/sandbox/egress-proxy.js";
import { isInternalAddress, parseHostRules } from "../../src/support/host-rules.js";
import { tempDir } from "../helpers/repo.js";
import { closedAfterEach, countingEgress } from "./egress-lab.js";

// The egress proxy as an attacker sees it: a sandboxed agent that spells addresses oddly, pipelines
// requests it never waits for, and asks for endless names it knows will be refused.

const closers = closedAfterEach();

async function proxyOf(rules: string[]): Promise<{ proxy: EgressProxy; refused: EgressRefusal[] }> {
  const refused: EgressRefusal[] = [];
  const proxy = new EgressProxy(join(tempDir("caesar-egress-audit-"), "egress"), parseHostRules(rules), (r) =>
    refused.push(r),
  );
  await proxy.listen();
  closers.push(() => proxy.close());
  return { proxy, refused };
}

/** What the proxy answers to `text` sent raw on its socket: its first line. */
function ask(proxy: { folder: string }, text: string): Promise<string> {
  return new Promise((done) => {
    const socket = connect(join(proxy.folder, PROXY_SOCKET));
    let out = "";
    socket.on("connect", () => socket.write(text));
    socket.on("data", (chunk: Buffer) => {
      out += chunk;
      if (out.includes("\r\n")) socket.destroy();
    });
    socket.on("error", () => undefined);
    socket.on("close", () => done(out.split("\r\n")[0] ?? ""));
    setTimeout(() => socket.destroy(), 5000);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the egress proxy against a hostile agent", () => {
  it("an IPv6 spelling of the host's own addresses is internal, whatever the spelling", () => {
    for (const internal of [
      "::ffff:7f00:1", // 127.0.0.1, IPv4-mapped in hex (what new URL() makes of [::ffff:127.0.0.1])
      "::ffff:a9fe:a9fe", // 169.254.169.254, the cloud's metadata
      "::ffff:c0a8:101", // 192.168.1.1
      "0:0:0:0:0:0:0:1",
      "0::1",
      "::0:1",
      "::0.0.0.1",
      "::0:0",
      "0:0:0:0:0:0:0:0",
      "::ffff:0:7f00:1",
      "64:ff9b::7f00:1",
      "2002:7f00:1::1",
      "FE80::1",
      "fec0::1",
    ])
      expect(isInternalAddress(internal), internal).toBe(true);
    for (const external of ["::ffff:808:808", "64:ff9b::808:808", "2606:4700::1111", "2a00:1450:4001::1"])
      expect(isInternalAddress(external), external).toBe(false);
  });

  it("`*` reaches no loopback port through a non-canonical IPv6 spelling, tunnelled or proxied, and each refusal is reported", async () => {
    let hits = 0;
    const host = createHttpServer((_req, res) => {
      hits++;
      res.end("the host's own service\n");
    });
    // Port 80 is what `*` opens; a machine where it cannot be bound still shows the 403s.
    const bound = await new Promise<boolean>((resolve) => {
      host.once("error", () => resolve(false));
      host.listen(80, "127.0.0.1", () => resolve(true));
    });
    if (bound) closers.push(() => host.close());
    const { proxy, refused } = await proxyOf(["*"]);
    const tries = [
      "CONNECT [::ffff:7f00:1]:80 HTTP/1.1\r\n\r\n",
      "CONNECT [0:0:0:0:0:0:0:1]:443 HTTP/1.1\r\n\r\n",
      "CONNECT [0::1]:443 HTTP/1.1\r\n\r\n",
      "CONNECT [::0:0]:443 HTTP/1.1\r\n\r\n",
      "CONNECT [::ffff:7f00:1]:443 HTTP/1.1\r\n\r\n",
      "GET http://[::ffff:127.0.0.1]/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    ];
    for (const text of tries) expect(await ask(proxy, text), text).toBe("HTTP/1.1 403 Forbidden");
    expect(refused.map((r) => `${r.host} ${r.port}`)).toEqual([
      "::ffff:7f00:1 80",
      "0:0:0:0:0:0:0:1 443",
      "0::1 443",
      "::0:0 443",
      "::ffff:7f00:1 443",
      "::ffff:7f00:1 80",
    ]);
    expect(hits).toBe(0);
  });

  it("requests pipelined on one connection open no upstream connection each, and none outlives the client", async () => {
    let open = 0;
    let made = 0;
    // A model server on the host's loopback that answers /now and never answers /slow.
    const held: Server = createServer((socket) => {
      open++;
      made++;
      socket.on("close", () => open--);
      socket.on("error", () => undefined);
      socket.on("data", (chunk: Buffer) => {
        if (chunk.toString().startsWith("GET /now"))
          socket.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
      });
    });
    await new Promise<void>((resolve) => held.listen(0, "127.0.0.1", resolve));
    closers.push(() => held.close());
    const port = (held.address() as { port: number }).port;
    const { proxy } = await proxyOf([`127.0.0.1:${port}`]);

    // Sequential requests on a kept-alive connection still work.
    const agentSocket = () => connect(join(proxy.folder, PROXY_SOCKET));
    const keptAlive = agentSocket();
    let answers = "";
    keptAlive.on("data", (chunk: Buffer) => (answers += chunk));
    keptAlive.write(`GET http://127.0.0.1:${port}/now HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    await sleep(300);
    keptAlive.write(`GET http://127.0.0.1:${port}/now HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    await sleep(300);
    expect(answers.match(/HTTP\/1\.1 200/g)?.length, answers).toBe(2);
    keptAlive.destroy();

    made = 0;
    const client = agentSocket();
    client.on("error", () => undefined);
    let pipelined = "";
    for (let i = 0; i < 100; i++)
      pipelined += `GET http://127.0.0.1:${port}/slow${i} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`;
    client.write(pipelined);
    await sleep(1000);
    expect(made).toBeLessThanOrEqual(1);
    client.destroy();
    await sleep(500);
    expect(open).toBe(0);

    // One request left unanswered, its client gone: its upstream connection goes too.
    const lone = agentSocket();
    lone.write(`GET http://127.0.0.1:${port}/slow HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    await sleep(300);
    expect(open).toBe(1);
    lone.destroy();
    await sleep(500);
    expect(open).toBe(0);
  });

  it("an upstream's answer the proxy cannot write back (status 099) is a 502, not the end of the service", async () => {
    const upstream: Server = createServer((socket) => {
      socket.on("error", () => undefined);
      socket.once("data", () => socket.end("HTTP/1.1 099 Nope\r\nContent-Length: 0\r\n\r\n"));
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    closers.push(() => upstream.close());
    const port = (upstream.address() as { port: number }).port;
    const { proxy } = await proxyOf([`127.0.0.1:${port}`]);
    const get = `GET http://127.0.0.1:${port}/ HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`;
    // A throw in the proxy's response listener is an uncaught exception: vitest reports it as an error.
    expect(await ask(proxy, get)).toBe("HTTP/1.1 502 Bad Gateway");
    expect(await ask(proxy, get)).toBe("HTTP/1.1 502 Bad Gateway");
  });

  it("endless refused names are recorded 20 times and take neither the service's memory nor its log", async () => {
    const { proxy, events: counted, lines } = await countingEgress("t_flood", ["api.anthropic.com"], closers);
    const name = "a".repeat(2000);
    for (let i = 0; i < 1500; i += 50)
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          ask(proxy, `CONNECT ${name}${i + j}.example:443 HTTP/1.1\r\n\r\n`),
        ),
      );
    // Twenty hosts, and once: "more than 20".
    expect(counted()).toBe(21);
    expect(lines.length).toBeLessThanOrEqual(3);
    expect(lines.join("").length).toBeLessThan(2000);
  });
});
