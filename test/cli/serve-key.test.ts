import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { makeRepo } from "../helpers/repo.js";
import { type ServeProcess, startServe } from "../helpers/serve-process.js";

// The server's key stays with the person: never on a command line, sent only to a server that proves it
// holds it (without the key being sent), replaced at each start and on demand.

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
type Json = any;

interface Heard {
  method: string;
  path: string;
  authorization: string | undefined;
  body: string;
}

/** A listener that is not caesar: records every request; `answer` decides what it says. */
async function fakeListener(
  answer: (request: Heard) => Promise<{ status: number; body: string }>,
  port = 0,
): Promise<{ server: Server; url: string; heard: Heard[] }> {
  const heard: Heard[] = [];
  const server = createServer(async (request: IncomingMessage, response) => {
    let body = "";
    for await (const chunk of request) body += chunk;
    const entry = {
      method: request.method ?? "",
      path: request.url ?? "",
      authorization: request.headers.authorization,
      body,
    };
    heard.push(entry);
    const { status, body: out } = await answer(entry);
    response.writeHead(status, { "Content-Type": "application/json" }).end(out);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, heard };
}

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));
const tokenFile = (root: string) => join(root, ".caesar", "state", "serve", "token");
const readTokenFile = (root: string) => readFileSync(tokenFile(root), "utf8").trim();

let root: string;
let serve: ServeProcess;

beforeAll(async () => {
  root = makeRepo({ "README.md": "# key\n" });
  serve = await startServe(root);
});

afterAll(async () => {
  await serve?.stop();
});

describe("caesar serve --token", () => {
  it("refuses the token itself on the command line, and says how to give it", async () => {
    const literal = await runCaesar(["serve", "--port", "0", "--token", "z".repeat(40), "--json"], {
      cwd: root,
    });
    expect(literal.code).toBe(2);
    const error = parseJsonOutput<Json>(literal).error;
    expect(error.code).toBe("token_on_command_line");
    expect(error.detail).toContain("--token @");
    expect(error.detail).toContain("env:NAME");
  });
});

describe("caesar serve login sends the key to no unproven listener", () => {
  it("a fake listener named by CAESAR_URL gets a nonce, never the key", async () => {
    const fake = await fakeListener(async () => ({ status: 200, body: '{"proof":"00"}' }));
    try {
      const login = await runCaesar(["serve", "login", "--json"], {
        cwd: root,
        env: { CAESAR_URL: fake.url },
      });
      expect(login.code).toBe(1);
      expect(parseJsonOutput<Json>(login).error.code).toBe("server_unproven");
      const key = readTokenFile(root);
      expect(fake.heard.map((h) => `${h.method} ${h.path}`)).toEqual(["POST /api/prove"]);
      for (const request of fake.heard) {
        expect(request.authorization).toBeUndefined();
        expect(request.body).not.toContain(key);
      }
    } finally {
      await close(fake.server);
    }
  });

  it("a listener that relays the challenge to the real server is refused: the proof names the real origin", async () => {
    const relay = await fakeListener(async (request) => {
      const real = await fetch(new URL(request.path, serve.url), {
        method: request.method,
        headers: { "Content-Type": "application/json" },
        body: request.body,
      });
      return { status: real.status, body: await real.text() };
    });
    try {
      const login = await runCaesar(["serve", "login", "--json"], {
        cwd: root,
        env: { CAESAR_URL: relay.url },
      });
      expect(parseJsonOutput<Json>(login).error?.code).toBe("server_unproven");
      expect(relay.heard.every((h) => h.authorization === undefined)).toBe(true);
    } finally {
      await close(relay.server);
    }
  });

  it("with no server of this workspace running, nothing is sent to the default port", async () => {
    const idle = makeRepo();
    await runCaesar(["serve", "--rotate", "--json"], { cwd: idle });
    // Listen on the default port when it is free (another program may hold it on a shared machine).
    const fake = await fakeListener(async () => ({ status: 200, body: "{}" }), 4173).catch(() => undefined);
    try {
      const login = await runCaesar(["serve", "login", "--json"], { cwd: idle, env: { CAESAR_URL: "" } });
      expect(login.code).toBe(1);
      expect(parseJsonOutput<Json>(login).error.code).toBe("server_unproven");
      if (fake) expect(fake.heard).toEqual([]);
    } finally {
      if (fake) await close(fake.server);
    }
  });

  it("POST /api/prove refuses what is not a nonce with 400, never a 5xx", async () => {
    for (const body of ["not json", "{}", '{"nonce":"xyz"}', `{"nonce":"${"a".repeat(65)}"}`, "[]", "null"]) {
      const response = await fetch(`${serve.url}api/prove`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body,
      });
      expect([body, response.status]).toEqual([body, 400]);
    }
  });

  it("the workspace's own server proves itself, and the login works", async () => {
    const login = await runCaesar(["serve", "login", "--json"], { cwd: root, env: { CAESAR_URL: "" } });
    expect(login.code, login.stderr).toBe(0);
    expect(parseJsonOutput<Json>(login).url).toMatch(new RegExp(`^${serve.url}login\\?code=`));
  });
});

describe("the key rotates", () => {
  async function mintWith(token: string): Promise<number> {
    const response = await fetch(`${serve.url}api/login-links`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "X-Commit-Zero": "local-demo",
        Authorization: `Bearer ${token}`,
      },
      body: "{}",
    });
    return response.status;
  }

  it("caesar serve --rotate: the running server refuses the old key at once and takes the new one", async () => {
    const old = readTokenFile(root);
    expect(await mintWith(old)).toBe(200);
    const rotated = await runCaesar(["serve", "--rotate", "--json"], { cwd: root });
    expect(rotated.code, rotated.stderr).toBe(0);
    const fresh = readTokenFile(root);
    expect(fresh).not.toBe(old);
    expect(await mintWith(old)).toBe(401);
    expect(await mintWith(fresh)).toBe(200);
  });

  it("each start replaces the key, unless --pin-token", async () => {
    const workspace = makeRepo();
    const first = await startServe(workspace);
    const firstKey = readTokenFile(workspace);
    await first.stop();
    const second = await startServe(workspace);
    const secondKey = readTokenFile(workspace);
    await second.stop();
    expect(secondKey).not.toBe(firstKey);
    const pinned = await startServe(workspace, ["--port", "0", "--pin-token"]);
    await pinned.stop();
    expect(readTokenFile(workspace)).toBe(secondKey);
  });
});
