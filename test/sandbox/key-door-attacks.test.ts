import { createServer, type IncomingMessage } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { keyPlaceholder } from "../../src/agents/key-masks.js";
import { checkEnvironment } from "../../src/engine/conductor/checks.js";
import { type SandboxDoors, sandboxCommand } from "../../src/engine/conductor/sandbox-run.js";
import type { TaskPlan } from "../../src/engine/store/task-plan.js";
import { tempDir } from "../helpers/repo.js";
import { itWith } from "../helpers/system-deps.js";
import { closedAfterEach, listening } from "./egress-lab.js";
import { askDoor, keyDoorFor, maskedTask } from "./masked-task.js";
import { BUBBLEWRAP } from "./probe-project.js";

// An agent's attempts at its masked key (key-mask.test.ts says what the door does): through the door and
// the provider's answers, its environment, and the processes and files of its sandbox.

const closers = closedAfterEach();
const SECRET = "sk-ant-attack-secret-0123456789abcdef";
const PLACEHOLDER = keyPlaceholder("t_attack", "ANTHROPIC_API_KEY", SECRET);

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  trailers: IncomingMessage["trailers"];
  body: string;
}

/**
 * The worst provider: one that quotes in its answer's body whatever it was sent (as an API quotes a header
 * value it does not know in its error).
 */
async function reflecting(): Promise<{ port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk));
    req.on("end", () => {
      const one = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        trailers: req.trailers,
        body,
      };
      seen.push(one);
      const quoted = Object.entries(req.headers)
        .filter(([name]) => name !== "x-api-key" && name !== "authorization")
        .map(([name, value]) => `${name}=${value}`)
        .join("; ");
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: `unexpected header value(s): ${quoted}`, url: one.url }));
    });
  });
  const port = await listening(server, closers);
  return { port, seen };
}

const door = (upstream: string) => keyDoorFor(closers, upstream, PLACEHOLDER, SECRET);

const ask = (
  socketPath: string,
  path: string,
  headers: Record<string, string | string[]> = {},
  method = "GET",
) => askDoor(socketPath, path, { headers, method });

/** Bytes written as they are on the door's socket; what comes back before it closes (or `wait` ms pass). */
function raw(socketPath: string, bytes: string, wait = 1500): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    let out = "";
    const done = () => {
      socket.destroy();
      resolve(out);
    };
    socket.on("data", (chunk: Buffer) => (out += chunk.toString("latin1")));
    socket.on("close", done);
    socket.on("error", done);
    socket.write(Buffer.from(bytes, "latin1"));
    setTimeout(done, wait);
  });
}

describe("the key door, attacked through its socket", () => {
  it("puts the key in a key header only, as its whole value: no other header carries it to an answer", async () => {
    const upstream = await reflecting();
    const socket = await door(`http://127.0.0.1:${upstream.port}/anthropic`);
    const answer = await ask(socket, "/v1/messages", {
      "x-api-key": PLACEHOLDER,
      // Headers a provider quotes back when it does not know their value.
      "anthropic-beta": PLACEHOLDER,
      "anthropic-version": `v-${PLACEHOLDER}`,
      "content-type": PLACEHOLDER,
      cookie: `session=${PLACEHOLDER}`,
      "user-agent": PLACEHOLDER,
      referer: `https://x.example/${PLACEHOLDER}`,
      [PLACEHOLDER]: "as a name",
    });
    expect(answer.body).not.toContain(SECRET);
    expect(answer.body).toContain(PLACEHOLDER);
    const [seen] = upstream.seen;
    expect(seen?.headers["x-api-key"]).toBe(SECRET);
    expect(JSON.stringify({ ...seen?.headers, "x-api-key": "" })).not.toContain(SECRET);
  });

  it("forwarding headers a gateway may route by are not passed on: the agent does not choose where the key goes", async () => {
    const upstream = await reflecting();
    const socket = await door(`http://127.0.0.1:${upstream.port}/anthropic`);
    await ask(socket, "/v1/messages", {
      "x-api-key": PLACEHOLDER,
      forwarded: "host=evil.example",
      "x-forwarded-host": "evil.example",
      "x-forwarded-for": "10.0.0.1",
      "x-forwarded-proto": "http",
      "x-forwarded-prefix": "/other-tenant",
      "x-original-url": "/other-tenant/v1/messages",
      "x-rewrite-url": "/other-tenant/v1/messages",
      "x-real-ip": "10.0.0.1",
    });
    const names = Object.keys(upstream.seen[0]?.headers ?? {});
    expect(names).toContain("x-api-key");
    expect(
      names.filter(
        (name) =>
          name.startsWith("x-forwarded") || /^(forwarded|x-original-url|x-rewrite-url|x-real-ip)$/.test(name),
      ),
    ).toEqual([]);
  });

  it("a key header with the placeholder inside other text is not a key: no part of the key to quote", async () => {
    const upstream = await reflecting();
    const socket = await door(`http://127.0.0.1:${upstream.port}`);
    await ask(socket, "/v1/messages", { "x-api-key": `xxxx${PLACEHOLDER}` });
    await ask(socket, "/v1/messages", { authorization: `Basic ${PLACEHOLDER}` });
    await ask(socket, "/v1/messages", { "x-goog-api-key": `${PLACEHOLDER},${PLACEHOLDER}` });
    await ask(socket, "/v1/messages", { authorization: `Bearer ${PLACEHOLDER}` });
    expect(
      upstream.seen.map(
        (seen) => seen.headers["x-api-key"] ?? seen.headers["x-goog-api-key"] ?? seen.headers.authorization,
      ),
    ).toEqual([
      `xxxx${PLACEHOLDER}`,
      `Basic ${PLACEHOLDER}`,
      `${PLACEHOLDER},${PLACEHOLDER}`,
      `Bearer ${SECRET}`,
    ]);
  });

  it("stays under the base URL's path: dot segments, plain, encoded, with backslashes or `;`, are refused", async () => {
    const upstream = await reflecting();
    const socket = await door(`http://127.0.0.1:${upstream.port}/tenant/anthropic`);
    for (const path of [
      "/../other/v1/messages",
      "/v1/../../other",
      "/%2e%2e/other",
      "/%2E./other",
      "/v1%2f..%2f..%2fother",
      "/v1\\..\\..\\other",
      "/..;/other",
      "/./v1/messages",
      "//evil.example/x",
      "http://evil.example/x",
      "evil.example:443",
      "*",
    ]) {
      // Refused by the door (400), or by its parser (the connection closed).
      const answer = await ask(socket, path, { "x-api-key": PLACEHOLDER }).catch(() => ({
        status: 400,
        body: "",
      }));
      expect(answer.status, path).toBe(400);
      expect(answer.body).not.toContain(SECRET);
    }
    expect(upstream.seen).toEqual([]);
    // What is no dot segment goes on, under the prefix.
    await ask(socket, "/v1/messages/..foo/@evil.example?x=/../y", { "x-api-key": PLACEHOLDER });
    expect(upstream.seen.map((seen) => seen.url)).toEqual([
      "/tenant/anthropic/v1/messages/..foo/@evil.example?x=/../y",
    ]);
  });

  it("CONNECT, upgrades, smuggling, trailers, malformed headers: refused or harmless, and the door stays up", async () => {
    const upstream = await reflecting();
    const socket = await door(`http://127.0.0.1:${upstream.port}/base`);
    const cases: Record<string, string> = {
      connect: `CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\nx-api-key: ${PLACEHOLDER}\r\n\r\n`,
      smuggled: `POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /y HTTP/1.1\r\nHost: a\r\n\r\n`,
      twoLengths: "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
      folded: `GET /x HTTP/1.1\r\nHost: a\r\nx-api-key: a\r\n ${PLACEHOLDER}\r\n\r\n`,
      control: "GET /x HTTP/1.1\r\nHost: a\r\nX-A: a\x7fb\r\n\r\n",
      nul: "GET /x HTTP/1.1\r\nHost: a\r\nX-A: a\x00b\r\n\r\n",
      tabInPath: "GET /x\tY HTTP/1.1\r\nHost: a\r\n\r\n",
      huge: `GET /x HTTP/1.1\r\nHost: a\r\nX-A: ${"a".repeat(70_000)}\r\n\r\n`,
      upgrade: `GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nx-api-key: ${PLACEHOLDER}\r\n\r\n`,
      http10: `GET /old HTTP/1.0\r\nx-api-key: ${PLACEHOLDER}\r\n\r\n`,
      trailer: `POST /t HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTrailer: x-api-key\r\nConnection: close\r\n\r\n1\r\nx\r\n0\r\nx-api-key: ${PLACEHOLDER}\r\nx-t: ${PLACEHOLDER}\r\n\r\n`,
      continue: `POST /c HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\nConnection: close\r\nx-api-key: ${PLACEHOLDER}\r\n\r\nhi`,
    };
    const answers: Record<string, string> = {};
    for (const [name, bytes] of Object.entries(cases)) answers[name] = await raw(socket, bytes, 700);
    for (const text of Object.values(answers)) expect(text).not.toContain(SECRET);
    expect(answers.connect).not.toMatch(/^HTTP\/1\.1 200/);
    // Only the well-formed requests reached the provider, each under its prefix, none upgraded or with a trailer.
    expect(upstream.seen.map((seen) => seen.url).sort()).toEqual([
      "/base/c",
      "/base/old",
      "/base/t",
      "/base/ws",
    ]);
    for (const seen of upstream.seen) {
      expect(seen.headers.upgrade).toBeUndefined();
      expect(seen.trailers).toEqual({});
      // The trailer's placeholder is not a header (nor passed on); each header's is the key.
      expect(seen.headers["x-api-key"]).toBe(seen.url === "/base/t" ? undefined : SECRET);
    }
    // Still serving.
    expect((await ask(socket, "/after", { "x-api-key": PLACEHOLDER })).body).toContain('"url":"/base/after"');
  });

  it("a key Node will not put in a header (a CR of a CRLF .env file, a non-Latin-1 character): refused, the door stays up", async () => {
    const upstream = await reflecting();
    for (const bad of [`${SECRET}\r`, `${SECRET}\u20ac`]) {
      const placeholder = keyPlaceholder("t_attack", "ANTHROPIC_API_KEY", bad);
      const socket = await keyDoorFor(closers, `http://127.0.0.1:${upstream.port}`, placeholder, bad);
      const refused = await ask(socket, "/v1/messages", { "x-api-key": placeholder });
      expect(refused.status).toBe(502);
      expect(refused.body).not.toContain(SECRET);
      expect((await ask(socket, "/after")).body).toContain('"url":"/after"');
    }
    expect(upstream.seen.map((seen) => seen.url)).toEqual(["/after", "/after"]);
  });

  it("a short key (a local gateway's \"json\") is put back to its placeholder as a whole value, not inside an answer's headers", async () => {
    const upstream = await reflecting();
    const placeholder = keyPlaceholder("t_attack", "ANTHROPIC_API_KEY", "json");
    const socket = await keyDoorFor(closers, `http://127.0.0.1:${upstream.port}`, placeholder, "json");
    const answer = await ask(socket, "/v1/messages", { "x-api-key": placeholder });
    expect(upstream.seen[0]!.headers["x-api-key"]).toBe("json");
    expect(answer.headers["content-type"]).toBe("application/json");
  });

  it("many connections at once: refused past its bound, and the door serves again when they go", async () => {
    const upstream = await reflecting();
    const socket = await door(`http://127.0.0.1:${upstream.port}`);
    const idle = await Promise.all(
      Array.from(
        { length: 200 },
        () =>
          new Promise<ReturnType<typeof connect>>((resolve) => {
            const one = connect(socket);
            one.on("error", () => undefined);
            one.on("connect", () => resolve(one));
            one.on("close", () => resolve(one));
          }),
      ),
    );
    for (const one of idle) one.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await ask(socket, "/after", { "x-api-key": PLACEHOLDER })).body).toContain('"url":"/after"');
  });
});

describe("the agent's environment", () => {
  const door = (placeholders: Record<string, string>, urlVariable = "ANTHROPIC_BASE_URL") => ({
    egress: {
      folder: tempDir("caesar-key-env-"),
      ports: [],
      keys: [{ socket: "key-0.sock", urlVariable, placeholders, taskId: "t_env" }],
    },
  });
  const plan = {
    root: tempDir("caesar-key-env-root-"),
    mode: "write",
    network: false,
    sandbox: { backend: "bwrap", detail: "t", cuts_network: true, egress: [], mask_keys: true },
  } as unknown as TaskPlan;
  /** The sandboxed command of a program of this plan's, in `env`, behind `doors`. */
  const commandIn = (env: Record<string, string>, doors: SandboxDoors, product = "") =>
    sandboxCommand(
      plan,
      { workspace: plan.root, worktree: null },
      join(plan.root, "t"),
      { bin: "/bin/true", args: [], cwd: plan.root },
      env,
      doors,
      product,
    );

  it("the key under another name (or inside another variable) is masked as well", () => {
    const key = "AIzaSyD-attack-secret-0123456789abcdef";
    const placeholder = keyPlaceholder("t_env", "GEMINI_API_KEY", key);
    const env = {
      PATH: process.env.PATH ?? "",
      GEMINI_API_KEY: key,
      GOOGLE_API_KEY: key,
      SOME_HEADERS: `x-goog-api-key: ${key}`,
    };
    const command = commandIn(env, door({ GEMINI_API_KEY: placeholder }, "GOOGLE_GEMINI_BASE_URL"), "gemini");
    expect(JSON.stringify(command)).not.toContain(key);
    expect(command.env.GEMINI_API_KEY).toBe(placeholder);
    expect(command.env.GOOGLE_API_KEY).toBe(placeholder);
    expect(command.env.SOME_HEADERS).toBe(`x-goog-api-key: ${placeholder}`);
    expect(command.env.PATH).toBe(env.PATH);
  });

  it("a short key is masked only as a whole value, never inside unrelated text", () => {
    const placeholder = keyPlaceholder("t_env", "ANTHROPIC_API_KEY", "bin");
    const env = { PATH: "/usr/bin:/bin", ANTHROPIC_API_KEY: "bin", OTHER: "bin" };
    const command = commandIn(env, door({ ANTHROPIC_API_KEY: placeholder }), "claude");
    expect(command.env.PATH).toBe("/usr/bin:/bin");
    expect(command.env.OTHER).toBe(placeholder);
  });

  it("a check's environment (the agent's, less its keys' variables) has the key under another name masked too", () => {
    const placeholder = keyPlaceholder("t_env", "ANTHROPIC_API_KEY", SECRET);
    const agentEnv = { PATH: "/bin", ANTHROPIC_API_KEY: SECRET, GATEWAY_HEADERS: `x-api-key: ${SECRET}` };
    const checkEnv = checkEnvironment(agentEnv);
    expect(checkEnv.GATEWAY_HEADERS).toContain(SECRET);
    const command = commandIn(checkEnv, { ...door({ ANTHROPIC_API_KEY: placeholder }), keysFrom: agentEnv });
    expect(JSON.stringify(command)).not.toContain(SECRET);
    expect(command.env.GATEWAY_HEADERS).toBe(`x-api-key: ${placeholder}`);
    // The check gets neither the key's variable nor the door's address.
    expect(command.env.ANTHROPIC_API_KEY).toBeUndefined();
    expect(command.env.ANTHROPIC_BASE_URL).toBeUndefined();
  });

  it("a check (run after the agent, in its sandbox) gets no provider key, masked or not", () => {
    const env = checkEnvironment({
      PATH: "/bin",
      ANTHROPIC_API_KEY: SECRET,
      ANTHROPIC_AUTH_TOKEN: SECRET,
      GEMINI_API_KEY: SECRET,
      COPILOT_PROVIDER_API_KEY: SECRET,
    });
    expect(JSON.stringify(env)).not.toContain(SECRET);
  });
});

describe("a sandboxed agent after its key", () => {
  itWith(
    BUBBLEWRAP,
    "reads every process's environment and command line, every file it can reach of the egress folder, and asks a quoting provider: no key",
    async () => {
      const upstream = await reflecting();
      const task = maskedTask(
        closers,
        upstream.port,
        SECRET,
        { ANTHROPIC_CUSTOM_HEADERS: `x-api-key: ${SECRET}` },
        "t_attack",
      );
      const egress = await task.open();
      const script = [
        'const fs = require("fs");',
        "let found = [];",
        'for (const pid of fs.readdirSync("/proc").filter((name) => /^\\d+$/.test(name)))',
        '  for (const what of ["environ", "cmdline"])',
        '    try { const text = fs.readFileSync("/proc/" + pid + "/" + what, "latin1"); found.push(text); } catch {}',
        'for (const name of fs.readdirSync("/tmp/.caesar-egress")) found.push(name);',
        'const ask = (headers) => fetch(process.env.ANTHROPIC_BASE_URL + "/v1/messages", { method: "POST", headers, body: "{}" }).then((r) => r.text());',
        "const key = process.env.ANTHROPIC_API_KEY;",
        'Promise.all([ask({ "x-api-key": key, "anthropic-beta": key }), ask({ "x-api-key": key, cookie: "a=" + key, "content-type": key })])',
        '  .then((answers) => { found.push(...answers); console.log("ALL=" + Buffer.from(found.join("\\n")).toString("base64")); console.log("ASKED=" + answers.length); },',
        '    (e) => console.log("FAILED=" + e.message));',
      ].join("\n");
      const agent = task.start(egress.door, script);
      const { code, out } = await agent.done;
      const command = agent.command;
      expect(code, out).toBe(0);
      expect(out).toContain("ASKED=2");
      const all = Buffer.from(/ALL=(\S+)/.exec(out)?.[1] ?? "", "base64").toString("latin1");
      expect(all).toContain(PLACEHOLDER);
      expect(all).not.toContain(SECRET);
      expect(out).not.toContain(SECRET);
      expect(JSON.stringify(command)).not.toContain(SECRET);
      expect(upstream.seen.map((seen) => seen.headers["x-api-key"])).toEqual([SECRET, SECRET]);
    },
  );
});
