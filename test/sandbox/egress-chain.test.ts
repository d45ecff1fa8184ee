import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, request, type Server } from "node:http";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { governanceFindings } from "../../src/engine/conductor/governance-findings.js";
import { openEgress, type TaskEgress } from "../../src/engine/conductor/task-egress.js";
import { controlTaskPaths } from "../../src/engine/store/control.js";
import type { EventWriter } from "../../src/engine/store/event-log.js";
import type { TaskPlan } from "../../src/engine/store/task-plan.js";
import { EgressProxy, type EgressRefusal, PROXY_SOCKET } from "../../src/sandbox/egress-proxy.js";
import { MachineProxies } from "../../src/sandbox/upstream-proxy.js";
import { parseHostRules } from "../../src/support/host-rules.js";
import { git, taskDir, tempDir, writeFiles } from "../helpers/repo.js";
import { itWith } from "../helpers/system-deps.js";
import { closedAfterEach, listening as serveOnLoopback } from "./egress-lab.js";
import { BUBBLEWRAP, project, run } from "./probe-project.js";

// The egress proxy behind a machine's own proxy (a company's gateway): what the task's rules allow goes
// through the proxy the service's environment names, by the name the agent asked for; nothing else does.
// Real sockets throughout: a target server, and gateways written here that record what they are asked.

const closers = closedAfterEach();

const listening = (server: Server) => serveOnLoopback(server, closers);

/** A server on the host's loopback answering `hello from the target`, counting what it answers. */
async function targetServer(): Promise<{ port: number; hits: () => number }> {
  let hits = 0;
  const server = createHttpServer((req, res) => {
    hits++;
    res.end(`hello from the target ${req.url}\n`);
  });
  return { port: await listening(server), hits: () => hits };
}

interface Asked {
  method: string;
  url: string;
  authorization: string | undefined;
}

/**
 * A company's gateway: CONNECT and absolute-form http, every name taken to the host's loopback (so that a
 * name only it knows is reached only through it). With `credentials`, it wants them (407 otherwise); names
 * starting `blocked.` it answers 403. It records every request it is asked.
 */
async function gateway(credentials?: string): Promise<{ port: number; asked: Asked[] }> {
  const asked: Asked[] = [];
  const expected = credentials && `Basic ${Buffer.from(credentials).toString("base64")}`;
  const record = (req: IncomingMessage) => {
    asked.push({
      method: req.method ?? "",
      url: req.url ?? "",
      authorization: req.headers["proxy-authorization"],
    });
    if (expected && req.headers["proxy-authorization"] !== expected) return 407;
    const host = req.method === "CONNECT" ? (req.url ?? "") : new URL(req.url ?? "").host;
    return host.startsWith("blocked.") ? 403 : 200;
  };
  const server = createHttpServer((req, res) => {
    const status = record(req);
    if (status !== 200) {
      res.writeHead(status, { connection: "close" }).end();
      return;
    }
    const url = new URL(req.url ?? "");
    const headers = { ...req.headers };
    delete headers["proxy-authorization"];
    const out = request(
      {
        host: "127.0.0.1",
        port: Number(url.port || 80),
        path: url.pathname + url.search,
        method: req.method,
        headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on("error", () => res.destroy());
    req.pipe(out);
  });
  server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    client.on("error", () => undefined);
    const status = record(req);
    if (status !== 200) {
      client.end(
        `HTTP/1.1 ${status} ${status === 407 ? "Proxy Authentication Required" : "Forbidden by policy"}\r\n\r\n`,
      );
      return;
    }
    const port = Number((req.url ?? "").split(":").pop());
    const out = connect(port, "127.0.0.1", () => {
      client.write("HTTP/1.1 200 Connection established\r\n\r\n");
      out.write(head);
      out.pipe(client);
      client.pipe(out);
    });
    out.on("error", () => client.destroy());
  });
  return { port: await listening(server), asked };
}

async function proxyOf(
  rules: string[],
  env: NodeJS.ProcessEnv,
  resolveName?: (host: string, how: "dns" | "system") => Promise<string[]>,
): Promise<{ proxy: EgressProxy; refused: EgressRefusal[] }> {
  const refused: EgressRefusal[] = [];
  const proxy = new EgressProxy(
    join(tempDir("caesar-egress-chain-"), "egress"),
    parseHostRules(rules),
    (refusal) => refused.push(refusal),
    { upstream: MachineProxies.fromEnvironment(env), ...(resolveName && { resolveName }) },
  );
  await proxy.listen();
  closers.push(() => proxy.close());
  return { proxy, refused };
}

/** What the agent sees: its `text` sent raw on the proxy's socket, and all it reads back (first line, body). */
function exchange(
  proxy: { folder: string },
  text: string,
  then?: string,
  waitMs = 8000,
): Promise<{ status: string; all: string }> {
  return new Promise((done) => {
    const socket = connect(join(proxy.folder, PROXY_SOCKET));
    let all = "";
    let sent = false;
    socket.on("connect", () => socket.write(text));
    socket.on("data", (chunk: Buffer) => {
      all += chunk;
      if (then && !sent && all.startsWith("HTTP/1.1 200") && all.includes("\r\n\r\n")) {
        sent = true;
        socket.write(then);
      }
    });
    socket.on("error", () => undefined);
    socket.on("close", () => done({ status: all.split("\r\n")[0] ?? "", all }));
    setTimeout(() => socket.destroy(), waitMs);
  });
}

const tunnelGet = (proxy: { folder: string }, authority: string, headers = "") =>
  exchange(
    proxy,
    `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${headers}\r\n`,
    `GET /through-tunnel HTTP/1.1\r\nHost: ${authority}\r\nConnection: close\r\n\r\n`,
  );

const plainGet = (proxy: { folder: string }, url: string, headers = "") =>
  exchange(proxy, `GET ${url} HTTP/1.1\r\nHost: ${new URL(url).host}\r\n${headers}Connection: close\r\n\r\n`);

describe("the egress proxy chains the machine's proxy", () => {
  it("CONNECT and plain http go through it by the name the agent asked for (a name only it can resolve)", async () => {
    const target = await targetServer();
    const gw = await gateway();
    const env = { HTTPS_PROXY: `http://127.0.0.1:${gw.port}`, HTTP_PROXY: `http://127.0.0.1:${gw.port}` };
    const { proxy, refused } = await proxyOf([`api.model.test:${target.port}`], env);

    const tunnelled = await tunnelGet(proxy, `api.model.test:${target.port}`);
    expect(tunnelled.status).toBe("HTTP/1.1 200 Connection Established");
    expect(tunnelled.all).toContain("hello from the target /through-tunnel");
    const proxied = await plainGet(proxy, `http://api.model.test:${target.port}/plain?x=1`);
    expect(proxied.status).toBe("HTTP/1.1 200 OK");
    expect(proxied.all).toContain("hello from the target /plain?x=1");

    expect(gw.asked.map((a) => `${a.method} ${a.url}`)).toEqual([
      `CONNECT api.model.test:${target.port}`,
      `GET http://api.model.test:${target.port}/plain?x=1`,
    ]);
    expect(target.hits()).toBe(2);
    expect(refused).toEqual([]);
  });

  it("with credentials in its URL: Proxy-Authorization Basic, the service's — never the agent's", async () => {
    const target = await targetServer();
    const gw = await gateway("corp\\jane:p@ss word");
    const url = `http://corp%5Cjane:p%40ss%20word@127.0.0.1:${gw.port}`;
    const { proxy } = await proxyOf([`api.model.test:${target.port}`], { https_proxy: url, http_proxy: url });
    const expected = `Basic ${Buffer.from("corp\\jane:p@ss word").toString("base64")}`;
    const agents = `Proxy-Authorization: Basic ${Buffer.from("agent:guess").toString("base64")}\r\n`;

    expect((await tunnelGet(proxy, `api.model.test:${target.port}`, agents)).all).toContain(
      "hello from the target",
    );
    expect((await plainGet(proxy, `http://api.model.test:${target.port}/`, agents)).all).toContain(
      "hello from the target",
    );
    expect(gw.asked.map((a) => a.authorization)).toEqual([expected, expected]);
  });

  it("its refusal (403, 407) reaches the agent as a 502 saying why, recorded — without its credentials", async () => {
    const target = await targetServer();
    const gw = await gateway("jane:right-password");
    const wrong = `http://jane:wrong-password@127.0.0.1:${gw.port}`;
    const { proxy, refused } = await proxyOf([`api.model.test:${target.port}`], {
      HTTPS_PROXY: wrong,
      HTTP_PROXY: wrong,
    });

    const denied = await tunnelGet(proxy, `api.model.test:${target.port}`);
    expect(denied.status).toBe("HTTP/1.1 502 Bad Gateway");
    expect(denied.all).toContain(`answered 407 Proxy Authentication Required`);
    const deniedPlain = await plainGet(proxy, `http://api.model.test:${target.port}/`);
    expect(deniedPlain.status).toBe("HTTP/1.1 502 Bad Gateway");
    expect(deniedPlain.all).toContain("answered 407");
    expect(refused.map((r) => [r.host, r.upstream])).toEqual([
      ["api.model.test", true],
      ["api.model.test", true],
    ]);

    const { proxy: allowedByGw } = await proxyOf([`blocked.model.test:${target.port}`], {
      HTTPS_PROXY: `http://jane:right-password@127.0.0.1:${gw.port}`,
    });
    const blocked = await tunnelGet(allowedByGw, `blocked.model.test:${target.port}`);
    expect(blocked.status).toBe("HTTP/1.1 502 Bad Gateway");
    expect(blocked.all).toContain(
      `the machine's proxy, HTTPS_PROXY (127.0.0.1:${gw.port}), answered 403 Forbidden by policy`,
    );

    const said = JSON.stringify([denied, deniedPlain, blocked, refused]);
    for (const secret of [
      "right-password",
      "wrong-password",
      Buffer.from("jane:wrong-password").toString("base64"),
    ])
      expect(said).not.toContain(secret);
    expect(target.hits()).toBe(0);
  });

  it("an https:// machine's proxy is refused with a clear 502, naming no password", async () => {
    const { proxy, refused } = await proxyOf(["api.model.test"], {
      HTTPS_PROXY: "https://jane:hunter2@gw.example:443",
    });
    const answer = await tunnelGet(proxy, "api.model.test:443");
    expect(answer.status).toBe("HTTP/1.1 502 Bad Gateway");
    expect(answer.all).toContain("HTTPS_PROXY names an https:// proxy (gw.example)");
    expect(refused[0]?.upstream).toBe(true);
    expect(JSON.stringify([answer, refused])).not.toContain("hunter2");
  });

  it("what NO_PROXY names, and the host's loopback whatever NO_PROXY says, are reached directly", async () => {
    const target = await targetServer();
    const gw = await gateway();
    const env = {
      HTTPS_PROXY: `http://127.0.0.1:${gw.port}`,
      HTTP_PROXY: `http://127.0.0.1:${gw.port}`,
      NO_PROXY: ".corp.test",
    };
    const { proxy } = await proxyOf(
      [`git.corp.test:${target.port}`, `127.0.0.1:${target.port}`, `localhost:${target.port}`],
      env,
      async (host) => (host === "git.corp.test" ? ["127.0.0.1"] : ["127.0.0.1"]),
    );
    expect((await tunnelGet(proxy, `git.corp.test:${target.port}`)).all).toContain("hello from the target");
    expect((await plainGet(proxy, `http://git.corp.test:${target.port}/`)).all).toContain(
      "hello from the target",
    );
    expect((await tunnelGet(proxy, `127.0.0.1:${target.port}`)).all).toContain("hello from the target");
    expect((await tunnelGet(proxy, `localhost:${target.port}`)).all).toContain("hello from the target");
    expect((await plainGet(proxy, `http://127.0.0.1:${target.port}/`)).all).toContain(
      "hello from the target",
    );
    expect(target.hits()).toBe(5);
    expect(gw.asked).toEqual([]);
  });
});

describe("an agent against the chain", () => {
  it("cannot reach a refused host through it, nor the machine's proxy itself, nor pass its own words to it", async () => {
    const target = await targetServer();
    const gw = await gateway();
    const env = { HTTPS_PROXY: `http://127.0.0.1:${gw.port}`, HTTP_PROXY: `http://127.0.0.1:${gw.port}` };
    const { proxy, refused } = await proxyOf([`api.model.test:${target.port}`, "*.pkg.test"], env);
    for (const [way, answer] of [
      ["refused host", await tunnelGet(proxy, `evil.test:${target.port}`)],
      ["refused port", await tunnelGet(proxy, "api.model.test:22")],
      ["the gateway itself", await tunnelGet(proxy, `127.0.0.1:${gw.port}`)],
      ["the gateway, by name", await tunnelGet(proxy, `localhost:${gw.port}`)],
      ["refused host, plain", await plainGet(proxy, `http://evil.test:${target.port}/`)],
      // `*` wildcards allow any name: one that is no host name is not written into a request to the gateway.
      ["not a host name", await tunnelGet(proxy, "a=b.pkg.test:443")],
    ] as const)
      expect(answer.status, way).toBe("HTTP/1.1 403 Forbidden");
    expect(refused.map((r) => `${r.host}:${r.port}`)).toEqual([
      `evil.test:${target.port}`,
      "api.model.test:22",
      `127.0.0.1:${gw.port}`,
      `localhost:${gw.port}`,
      `evil.test:${target.port}`,
      "a=b.pkg.test:443",
    ]);
    expect(gw.asked).toEqual([]);
    expect(target.hits()).toBe(0);
  });

  it("a wildcard's name goes through only once it resolves here to public addresses — all of them", async () => {
    const target = await targetServer();
    const gw = await gateway();
    const names: Record<string, string[]> = {
      "public.pkg.test": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
      "metadata.pkg.test": ["169.254.169.254"],
      "mixed.pkg.test": ["93.184.216.34", "10.0.0.7"],
      "sixfour.pkg.test": ["::ffff:7f00:1"],
    };
    const resolveName = async (host: string, how: string) => {
      expect(how).toBe("dns");
      const found = names[host];
      if (!found) throw new Error(`queryA ENOTFOUND ${host}`);
      return found;
    };
    const { proxy, refused } = await proxyOf(
      [`*.pkg.test:${target.port}`],
      { HTTPS_PROXY: `http://127.0.0.1:${gw.port}` },
      resolveName,
    );
    expect((await tunnelGet(proxy, `public.pkg.test:${target.port}`)).all).toContain("hello from the target");
    for (const name of ["metadata", "mixed", "sixfour", "unknown"])
      expect((await tunnelGet(proxy, `${name}.pkg.test:${target.port}`)).status, name).toBe(
        "HTTP/1.1 403 Forbidden",
      );
    expect(gw.asked.map((a) => a.url)).toEqual([`public.pkg.test:${target.port}`]);
    expect(refused.map((r) => r.host)).toEqual([
      "metadata.pkg.test",
      "mixed.pkg.test",
      "sixfour.pkg.test",
      "unknown.pkg.test",
    ]);
    expect(refused.at(-1)?.why).toContain("a wildcard's host goes to the machine's proxy only once checked");
  });
});

/**
 * `address:port` made silent: a process listens there and never accepts (its event loop blocked), and the
 * kernel's queue of its connections is filled, so that the kernel drops further SYNs — a dead address.
 */
async function silentAt(address: string, port: number): Promise<void> {
  const child = spawn(
    process.execPath,
    [
      "-e",
      `require("net").createServer().listen(${port}, "${address}", 1, () => { console.log("ready"); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); })`,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  closers.push(() => child.kill("SIGKILL"));
  await new Promise((resolve) => child.stdout.once("data", resolve));
  for (;;) {
    const socket = connect(port, address);
    socket.on("error", () => undefined);
    closers.push(() => socket.destroy());
    const answered = await new Promise<boolean>((resolve) => {
      socket.once("connect", () => resolve(true));
      setTimeout(() => resolve(false), 300);
    });
    if (!answered) return;
  }
}

describe("every address of a name is tried", () => {
  it("a name whose first address is unreachable (broken IPv6, a dead address) connects through its next one", async () => {
    const target = await targetServer();
    const addresses: Record<string, string[]> = {
      // Nothing listens on [::1]:<port> (the target is on 127.0.0.1 only): refused, or unreachable.
      "broken-v6.model.test": ["::1", "127.0.0.1"],
      // An address that never answers (its SYNs dropped): the next is tried beside it after 250 ms.
      "silent.model.test": ["127.0.0.2", "127.0.0.1"],
    };
    await silentAt("127.0.0.2", target.port);
    const { proxy } = await proxyOf(
      [`broken-v6.model.test:${target.port}`, `silent.model.test:${target.port}`],
      {},
      async (host) => addresses[host] ?? [],
    );
    for (const host of Object.keys(addresses)) {
      const started = Date.now();
      expect((await tunnelGet(proxy, `${host}:${target.port}`)).all, host).toContain("hello from the target");
      expect((await plainGet(proxy, `http://${host}:${target.port}/`)).all, host).toContain(
        "hello from the target",
      );
      expect(Date.now() - started, host).toBeLessThan(3000);
    }
    expect(target.hits()).toBe(4);
  });

  it("a wildcard tries none of a name's internal addresses, first or not", async () => {
    const target = await targetServer();
    const { proxy, refused } = await proxyOf([`*.model.test:${target.port}`], {}, async () => [
      "192.0.2.1",
      "127.0.0.1",
      "::1",
    ]);
    const authority = `mixed.model.test:${target.port}`;
    const answer = await exchange(
      proxy,
      `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`,
      undefined,
      2000,
    );
    // Only the public address is tried: it does not answer (at once where it has no route, else never).
    expect(["HTTP/1.1 502 Bad Gateway", ""]).toContain(answer.status);
    expect(target.hits()).toBe(0);
    expect(refused).toEqual([]);
  });
});

describe("a task's proxy, as its conductor opens it", () => {
  /** `openEgress` with `env` as the conductor's own environment, restored after. */
  async function openWith(env: NodeJS.ProcessEnv, rules: string[], taskEnv: NodeJS.ProcessEnv) {
    const root = tempDir("caesar-egress-chain-task-");
    mkdirSync(join(root, ".caesar"), { recursive: true });
    const taskId = "t_chain";
    // The environment recorded for the task (whoever asked for it: for a nested task, its tree's).
    mkdirSync(controlTaskPaths(root, taskId).dir, { recursive: true });
    writeFileSync(join(controlTaskPaths(root, taskId).dir, "env.json"), JSON.stringify(taskEnv));
    const events: string[] = [];
    const lines: string[] = [];
    const saved = { ...process.env };
    for (const name of ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"])
      delete process.env[name];
    Object.assign(process.env, env);
    let egress: TaskEgress | undefined;
    try {
      egress = await openEgress(
        root,
        taskId,
        { sandbox: { backend: "bwrap", egress: rules } } as unknown as TaskPlan,
        {
          append: async (event: { message: string }) => void events.push(JSON.stringify(event)),
        } as unknown as EventWriter,
        (line) => lines.push(line),
      );
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
    }
    if (!egress) throw new Error("no proxy");
    const open = egress;
    closers.push(() => open.close());
    const proxy = open.door;
    const records = async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const refusals = existsSync(controlTaskPaths(root, taskId).refusals)
        ? readFileSync(controlTaskPaths(root, taskId).refusals, "utf8")
        : "";
      return { events, lines, refusals, findings: JSON.stringify(await governanceFindings(root, taskId)) };
    };
    return { proxy, records };
  }

  it("the machine's proxy is the conductor's, never one the task's recorded environment names", async () => {
    const target = await targetServer();
    const real = await gateway();
    const agents = await gateway();
    const { proxy } = await openWith(
      { HTTPS_PROXY: `http://127.0.0.1:${real.port}` },
      [`api.model.test:${target.port}`],
      {
        HTTPS_PROXY: `http://127.0.0.1:${agents.port}`,
        https_proxy: `http://127.0.0.1:${agents.port}`,
        NO_PROXY: "*",
      },
    );
    expect((await tunnelGet(proxy, `api.model.test:${target.port}`)).all).toContain("hello from the target");
    expect(real.asked.length).toBe(1);
    expect(agents.asked).toEqual([]);
  });

  it("its refusal is on the task's record — an event, a finding — and its credentials in none of them", async () => {
    const target = await targetServer();
    const gw = await gateway("jane:right-password");
    const url = `http://jane:wrong-password@127.0.0.1:${gw.port}`;
    const { proxy, records } = await openWith(
      { HTTPS_PROXY: url, HTTP_PROXY: url },
      [`api.model.test:${target.port}`],
      {},
    );
    expect((await tunnelGet(proxy, `api.model.test:${target.port}`)).status).toBe("HTTP/1.1 502 Bad Gateway");
    expect((await plainGet(proxy, `http://api.model.test:${target.port}/`)).status).toBe(
      "HTTP/1.1 502 Bad Gateway",
    );
    const { events, lines, refusals, findings } = await records();
    expect(events).toEqual([expect.stringContaining('"code":"egress_upstream_failed"')]);
    expect(events[0]).toContain(`HTTPS_PROXY (127.0.0.1:${gw.port}), answered 407`);
    expect(refusals).toContain('"code":"egress_upstream_failed"');
    expect(findings).toContain(`The machine's proxy did not open the agent's`);
    const all = JSON.stringify({ events, lines, refusals, findings });
    for (const secret of [
      "wrong-password",
      "right-password",
      Buffer.from("jane:wrong-password").toString("base64"),
    ])
      expect(all).not.toContain(secret);
  });
});

/** Inside the sandbox: each way out, one line each — `<WAY> <status or error>`; then its proxy variables. */
const PROBE = `
const http = require("node:http");
const net = require("node:net");
const [target, gw] = process.argv.slice(-2).map(Number);
const proxy = new URL(process.env.HTTPS_PROXY);
const say = (way, what) => console.log(way + " " + what);
const tunnel = (way, authority) => new Promise((done) => {
  const req = http.request({ host: proxy.hostname, port: proxy.port, method: "CONNECT", path: authority, timeout: 5000 });
  req.on("connect", (res, socket) => {
    if (res.statusCode !== 200) { say(way, res.statusCode); socket.destroy(); return done(); }
    socket.write("GET / HTTP/1.1\\r\\nHost: " + authority + "\\r\\nConnection: close\\r\\n\\r\\n");
    let text = ""; socket.on("data", (d) => (text += d)); socket.on("end", () => { say(way, "200 " + text.split("\\r\\n\\r\\n")[1].trim()); done(); });
  });
  req.on("response", (res) => { say(way, res.statusCode); done(); });
  req.on("error", (e) => { say(way, "ERROR " + e.code); done(); });
  req.end();
});
const get = (way, options) => new Promise((done) => {
  const req = http.get({ timeout: 5000, ...options }, (res) => {
    let body = ""; res.on("data", (d) => (body += d)); res.on("end", () => { say(way, res.statusCode + " " + body.trim()); done(); });
  });
  req.on("error", (e) => { say(way, "ERROR " + e.code); done(); });
});
(async () => {
  await tunnel("TUNNEL", "api.chain.test:" + target);
  await get("PROXIED", { host: proxy.hostname, port: proxy.port, path: "http://api.chain.test:" + target + "/", headers: { host: "api.chain.test:" + target } });
  await tunnel("BLOCKED", "blocked.chain.test:" + target);
  await tunnel("EVIL", "evil.chain.test:" + target);
  await tunnel("GATEWAY", "127.0.0.1:" + gw);
  // An agent that points its own clients at the gateway: it has no network of the host's to reach it by.
  await get("DIRECT-GATEWAY", { host: "127.0.0.1", port: gw, path: "http://api.chain.test:" + target + "/" });
  for (const [name, value] of Object.entries(process.env)) if (/proxy/i.test(name)) say("ENV", name + "=" + value);
})();
`;

describe("a sandboxed agent behind a machine's proxy (the conductor service's environment)", () => {
  itWith(
    BUBBLEWRAP,
    "reaches its allowed hosts through it, and nothing else; its credentials are in none of the task's records nor the agent's environment",
    async () => {
      const target = await targetServer();
      const gw = await gateway("corp:s3cret-gw");
      const root = project(
        `node probe.js ${target.port} ${gw.port}`,
        "required",
        `allow_hosts = ["api.chain.test:${target.port}", "blocked.chain.test:${target.port}"]`,
      );
      writeFiles(root, { "probe.js": PROBE });
      git(root, "add", ".");
      git(root, "commit", "-qm", "probe");
      const url = `http://corp:s3cret-gw@127.0.0.1:${gw.port}`;
      const result = await run(root, ["--network", "on", "--mode", "write"], {
        HTTPS_PROXY: url,
        HTTP_PROXY: url,
        NO_PROXY: "",
        no_proxy: "",
      });
      const seen: Record<string, string> = {};
      for (const line of result.raw.split("\n")) {
        const match = /^([A-Z-]+) (.*)$/.exec(line);
        if (match && match[1] !== "ENV") seen[match[1]!] = match[2]!;
      }
      expect(seen, result.raw).toMatchObject({
        TUNNEL: "200 hello from the target /",
        PROXIED: "200 hello from the target /",
        BLOCKED: "502",
        EVIL: "403",
        GATEWAY: "403",
      });
      expect(seen["DIRECT-GATEWAY"]).toMatch(/^ERROR (ECONNREFUSED|ENETUNREACH)/);
      expect(gw.asked.map((a) => `${a.method} ${a.url}`)).toEqual([
        `CONNECT api.chain.test:${target.port}`,
        `GET http://api.chain.test:${target.port}/`,
        `CONNECT blocked.chain.test:${target.port}`,
      ]);
      expect(result.state.report.findings.map((finding) => finding.title)).toEqual(
        expect.arrayContaining([
          `The machine's proxy did not open the agent's \`connect blocked.chain.test:${target.port}\``,
          `caesar refused the agent's \`connect evil.chain.test:${target.port}\``,
        ]),
      );
      // Nowhere in the task's records (its directory, caesar's control folder), nor in what the agent saw.
      const secrets = ["s3cret-gw", Buffer.from("corp:s3cret-gw").toString("base64")];
      const files = [
        taskDir(root, result.task_id),
        join(root, ".git", "caesar", "tasks", result.task_id),
      ].flatMap((dir) => readdirSync(dir, { recursive: true, withFileTypes: true }));
      const texts = files
        .filter((entry) => entry.isFile() && entry.name !== "env.json")
        .map((entry) => readFileSync(join(entry.parentPath, entry.name), "utf8"));
      expect(texts.length).toBeGreaterThan(3);
      for (const secret of secrets) for (const text of texts) expect(text).not.toContain(secret);
      expect(result.raw).toContain("ENV HTTPS_PROXY=http://127.0.0.1:");
    },
  );
});
