import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CAESAR_BIN, parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { makeRepo } from "../helpers/repo.js";
import { type ServeProcess, startServe } from "../helpers/serve-process.js";

/** `caesar serve` and `caesar query`, both the real binary, against a real workspace with a real task. */

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
type Json = any;

let root: string;
let serve: ServeProcess;
let taskId: string;

beforeAll(async () => {
  root = makeRepo({ "README.md": "# client\n" });
  const run = await runCaesar(
    ["run", "--json", "--agent", "reference", 'create notes.txt containing "noted"'],
    { cwd: root },
  );
  expect(run.code).toBe(0);
  taskId = parseJsonOutput<{ task_id: string }>(run).task_id;
  serve = await startServe(root);
});

afterAll(async () => {
  await serve?.stop();
});

/** caesar query, finding the server through the address `caesar serve` recorded (no CAESAR_URL). */
function agent(args: string[], env: NodeJS.ProcessEnv = {}) {
  return runCaesar(["query", ...args], { cwd: root, env: { CAESAR_URL: "", ...env } });
}

const serveDir = (workspace: string) => join(workspace, ".caesar", "state", "serve");
const addressFiles = (workspace: string) =>
  existsSync(serveDir(workspace))
    ? readdirSync(serveDir(workspace)).filter((name) => /^server-.*\.json$/.test(name))
    : [];

describe("caesar serve", () => {
  it("records its address in its own file of a private directory, beside the token, and binds loopback", () => {
    const file = join(serveDir(root), `server-${serve.runId}.json`);
    const address = JSON.parse(readFileSync(file, "utf8"));
    expect(address).toMatchObject({
      url: serve.url,
      host: "127.0.0.1",
      port: serve.port,
      pid: serve.child.pid,
      runId: serve.runId,
      token: "file",
    });
    expect(serve.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(serve.loginUrl).toMatch(new RegExp(`^${serve.url}login\\?code=[A-Za-z0-9_-]{43}$`));
    expect(statSync(serveDir(root)).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(serveDir(root), "token")).mode & 0o777).toBe(0o600);
    expect(existsSync(join(root, ".caesar", "state", "serve-token"))).toBe(false);
  });

  it("refuses another address without a token, and a weak token", async () => {
    const refused = await runCaesar(["serve", "--host", "0.0.0.0", "--port", "0", "--json"], { cwd: root });
    expect(refused.code).toBe(2);
    expect(parseJsonOutput<Json>(refused).error.code).toBe("token_required");
    const weak = await runCaesar(
      ["serve", "--host", "0.0.0.0", "--port", "0", "--token", "env:WEAK_TOKEN", "--json"],
      { cwd: root, env: { WEAK_TOKEN: "short" } },
    );
    expect(weak.code).toBe(2);
    expect(parseJsonOutput<Json>(weak).error.code).toBe("weak_token");
    const badPort = await runCaesar(["serve", "--port", "http", "--json"], { cwd: root });
    expect(badPort.code).toBe(2);
  });

  it("says so when its port is taken, and leaves the running server's address alone", async () => {
    const before = addressFiles(root);
    const busy = await runCaesar(["serve", "--port", String(serve.port), "--json"], { cwd: root });
    expect(busy.code).toBe(1);
    expect(parseJsonOutput<Json>(busy).error.code).toBe("port_in_use");
    expect(addressFiles(root)).toEqual(before);
  });

  it("with --host and a token, reads need the token from other machines (here: loopback still reads freely)", async () => {
    const other = makeRepo();
    const tokenEnv = { SERVE_TOKEN: "x".repeat(32) };
    const exposed = await startServe(
      other,
      ["--port", "0", "--host", "0.0.0.0", "--token", "env:SERVE_TOKEN"],
      tokenEnv,
    );
    try {
      const local = await fetch(`${exposed.url}api/state`);
      expect(local.status).toBe(200);
      const mutation = await fetch(`${exposed.url}api/mutate/v1/request`, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "X-Commit-Zero": "local-demo",
          Authorization: `Bearer ${"y".repeat(32)}`,
        },
        body: "{}",
      });
      expect(mutation.status).toBe(401);
      expect(addressFiles(other)).toEqual([`server-${exposed.runId}.json`]);
      // `caesar serve login` needs that server's --token, and says so.
      const login = await runCaesar(["serve", "login", "--json"], { cwd: other, env: { CAESAR_URL: "" } });
      expect(login.code).toBe(2);
      expect(parseJsonOutput<Json>(login).error.summary).toContain("started with --token");
      const withToken = await runCaesar(["serve", "login", "--json", "--token", "env:SERVE_TOKEN"], {
        cwd: other,
        env: { CAESAR_URL: "", ...tokenEnv },
      });
      expect(withToken.code, withToken.stderr).toBe(0);
    } finally {
      expect(await exposed.stop()).toBe(0);
    }
    // A clean stop removes its address file (and a token file was never needed).
    expect(addressFiles(other)).toEqual([]);
    expect(existsSync(join(serveDir(other), "token"))).toBe(false);
  });
});

describe("caesar serve login", () => {
  it("prints a new one-time login URL, for the token's holder", async () => {
    const result = await runCaesar(["serve", "login"], { cwd: root, env: { CAESAR_URL: "" } });
    expect(result.code, result.stderr).toBe(0);
    const url = result.stdout.trim();
    expect(url).toMatch(new RegExp(`^${serve.url}login\\?code=[A-Za-z0-9_-]{43}$`));
    const first = await fetch(url, { redirect: "manual" });
    expect(first.status).toBe(303);
    expect(first.headers.get("set-cookie")).toMatch(/HttpOnly; SameSite=Strict/);
    const again = await fetch(url, { redirect: "manual" });
    expect(again.status).toBe(403);
    expect(again.headers.get("set-cookie")).toBeNull();
  });

  it("--open hands it to $BROWSER", async () => {
    const seen = join(makeRepo(), "opened.txt");
    const browser = join(makeRepo(), "browser.sh");
    writeFileSync(browser, `#!/bin/sh\nprintf '%s' "$1" > '${seen}'\n`, { mode: 0o755 });
    const result = await runCaesar(["serve", "login", "--open", "--json"], {
      cwd: root,
      env: { CAESAR_URL: "", BROWSER: browser },
    });
    expect(result.code, result.stderr).toBe(0);
    const { url } = parseJsonOutput<Json>(result);
    await expect
      .poll(() => (existsSync(seen) ? readFileSync(seen, "utf8") : ""), { timeout: 30_000 })
      .toBe(url);
  });

  it("caesar serve --open hands the printed login URL to $BROWSER", async () => {
    const seen = join(makeRepo(), "opened.txt");
    const browser = join(makeRepo(), "browser.sh");
    writeFileSync(browser, `#!/bin/sh\nprintf '%s' "$1" > '${seen}'\n`, { mode: 0o755 });
    const other = await startServe(makeRepo(), ["--port", "0", "--open"], { BROWSER: `${browser} %s` });
    try {
      await expect
        .poll(() => (existsSync(seen) ? readFileSync(seen, "utf8") : ""), { timeout: 30_000 })
        .toBe(other.loginUrl);
    } finally {
      await other.stop();
    }
  });

  it("with no server running, says so", async () => {
    const empty = makeRepo();
    const result = await runCaesar(["serve", "login", "--json"], {
      cwd: empty,
      env: { CAESAR_URL: `http://127.0.0.1:${await freePort()}` },
    });
    expect(result.code).toBe(1);
    expect(parseJsonOutput<Json>(result).error.code).toBe("no_token");
  });
});

describe("several servers in one workspace", () => {
  it("each has its own file; the client asks which (or, without a terminal, says how to choose); stops and kills touch no other's file", async () => {
    const second = await startServe(root);
    try {
      expect(addressFiles(root).sort()).toEqual(
        [`server-${serve.runId}.json`, `server-${second.runId}.json`].sort(),
      );
      // No terminal (or --json): a clear error listing both, and how to choose.
      const ambiguous = await agent(["capabilities", "--json"]);
      expect(ambiguous.code).toBe(2);
      const error = parseJsonOutput<Json>(ambiguous).error;
      expect(error.code).toBe("several_servers");
      for (const server of [serve, second]) {
        expect(error.detail).toContain(server.url);
        expect(error.detail).toContain(`pid ${server.child.pid}`);
      }
      expect(error.detail).toContain("--server");
      expect(error.detail).toContain("CAESAR_URL");

      const byPid = await agent(["capabilities", "--json", "--server", String(second.child.pid)]);
      expect(parseJsonOutput<Json>(byPid).runId).toBe(second.runId);
      const byUrl = await agent(["capabilities", "--json", "--server", serve.url]);
      expect(parseJsonOutput<Json>(byUrl).runId).toBe(serve.runId);
      const byEnv = await agent(["capabilities", "--json"], { CAESAR_URL: second.url });
      expect(parseJsonOutput<Json>(byEnv).runId).toBe(second.runId);
      const noSuchPid = await agent(["capabilities", "--json", "--server", "1"]);
      expect(parseJsonOutput<Json>(noSuchPid).error.code).toBe("no_such_server");

      // On a terminal, it asks.
      const asked = await onTerminal(["query", "capabilities"], "2\n");
      expect(asked).toContain("Several caesar servers serve this workspace");
      expect(asked).toContain(`cz-agent/1 at ${second.url.replace(/\/$/, "")}`);

      // `caesar serve login` chooses the same way, and the link is the chosen server's.
      const login = await runCaesar(["serve", "login", "--server", String(second.child.pid)], {
        cwd: root,
        env: { CAESAR_URL: "" },
      });
      expect(login.stdout.trim().startsWith(`${second.url}login?code=`)).toBe(true);
    } finally {
      expect(await second.stop()).toBe(0);
    }
    expect(addressFiles(root)).toEqual([`server-${serve.runId}.json`]);
    expect(parseJsonOutput<Json>(await agent(["capabilities", "--json"])).runId).toBe(serve.runId);
  });

  it("the file of a server killed with -9 is stale: ignored, then removed", async () => {
    const doomed = await startServe(root);
    const exited = new Promise((resolve) => doomed.child.once("exit", resolve));
    doomed.child.kill("SIGKILL");
    await exited;
    expect(addressFiles(root)).toContain(`server-${doomed.runId}.json`);
    const result = await agent(["capabilities", "--json"]);
    expect(result.code, result.stdout).toBe(0);
    expect(parseJsonOutput<Json>(result).runId).toBe(serve.runId);
    expect(addressFiles(root)).toEqual([`server-${serve.runId}.json`]);
  });
});

/** Run caesar on a pseudo-terminal (util-linux `script`), typing `input`; the terminal's whole output. */
async function onTerminal(args: string[], input: string): Promise<string> {
  const command = [process.execPath, CAESAR_BIN, ...args].map((word) => `'${word}'`).join(" ");
  const result = await new Promise<{ code: number | null; out: string }>((resolve, reject) => {
    const child = spawn("script", ["-qec", command, "/dev/null"], {
      cwd: root,
      env: { ...process.env, CAESAR_URL: "", NO_COLOR: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out }));
    child.stdin.end(input);
  });
  expect(result.code, result.out).toBe(0);
  return result.out;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.listen(0, "127.0.0.1", () => {
      const free = (probe.address() as AddressInfo).port;
      probe.close(() => resolve(free));
    });
  });
}

describe("caesar query against the live server", () => {
  it("capabilities", async () => {
    const result = await agent(["capabilities", "--json"]);
    expect(result.code).toBe(0);
    const body = parseJsonOutput<Json>(result);
    expect(body.protocol).toBe("cz-agent/1");
    expect(body.operations).toHaveLength(3);
    const human = await agent(["capabilities"]);
    expect(human.stdout).toContain("cz-agent/1 at http://127.0.0.1:");
  });

  it("answers under its 0.1 name, caesar agent, for this release", async () => {
    const old = await runCaesar(["agent", "capabilities", "--json"], { cwd: root, env: { CAESAR_URL: "" } });
    expect(old.code, old.stderr).toBe(0);
    expect(parseJsonOutput<Json>(old).protocol).toBe("cz-agent/1");
  });

  it("timeline, with an actor, pages and repository filter", async () => {
    const all = parseJsonOutput<Json>(await agent(["timeline", "--json", "--limit", "100"]));
    expect(all).toMatchObject({ protocol: "cz-agent/1", provenance: "observed", operation: "timeline.read" });
    expect(all.result.entries.length).toBeGreaterThan(3);
    expect(all.result.entries.every((e: Json) => e.taskId === taskId && e.actor === "reference")).toBe(true);
    const reference = parseJsonOutput<Json>(await agent(["timeline", "reference", "--json", "--limit", "2"]));
    expect(reference.result.entries).toHaveLength(2);
    expect(reference.result.nextBefore).toBe(reference.result.entries[1].position);
    const next = parseJsonOutput<Json>(
      await agent([
        "timeline",
        "reference",
        "--json",
        "--limit",
        "2",
        "--before",
        String(reference.result.nextBefore),
      ]),
    );
    expect(next.result.entries[0].position).toBeLessThan(reference.result.nextBefore);
    const user = parseJsonOutput<Json>(await agent(["timeline", "user", "--json"]));
    expect(user.result.entries).toEqual([]);
    const worktree = parseJsonOutput<Json>(
      await agent(["timeline", "--repo", taskId, "--json", "--limit", "100"]),
    );
    expect(worktree.result.entries).toHaveLength(all.result.entries.length);
    const human = await agent(["timeline"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("finished");
    expect(human.stdout).toContain(taskId);
  });

  it("repository", async () => {
    const capabilities = parseJsonOutput<Json>(await agent(["capabilities", "--json"]));
    const project = capabilities.repositories.project;
    const result = parseJsonOutput<Json>(await agent(["repository", project, "--json"]));
    expect(result.result).toMatchObject({ id: project, kind: "project", vcs: "git" });
    expect(result.result.snapshot.files.map((f: Json) => f.path)).toContain("README.md");
    const human = await agent(["repository", taskId]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("notes.txt");
    const missing = await agent(["repository", "nope", "--json"]);
    expect(missing.code).toBe(1);
    expect(parseJsonOutput<Json>(missing).error.code).toBe("repository_not_found");
  });

  it("change", async () => {
    const result = parseJsonOutput<Json>(await agent(["change", "1", "--json"]));
    expect(result.result).toMatchObject({ number: 1, taskId, status: "ready" });
    expect(result.result.diff.patch).toContain("+noted");
    const human = await agent(["change", "1"]);
    expect(human.stdout).toContain("change #1");
    expect(human.stdout).toContain("+noted");
    const missing = await agent(["change", "77", "--json"]);
    expect(missing.code).toBe(1);
    expect(parseJsonOutput<Json>(missing).error.code).toBe("change_not_found");
    // Refused by the server or by the client, an invalid argument exits as the catalogue says: 2, usage.
    const invalid = await agent(["change", "0", "--json"]);
    expect(invalid.code).toBe(2);
    expect(parseJsonOutput<Json>(invalid).error.code).toBe("invalid_argument");
    const notNumber = await agent(["change", "seven", "--json"]);
    expect(notNumber.code).toBe(2);
  });

  it("CAESAR_URL selects the server; non-local endpoints are refused before any request", async () => {
    const explicit = await agent(["capabilities", "--json"], {
      CAESAR_URL: `http://localhost:${serve.port}`,
    });
    expect(explicit.code).toBe(0);
    for (const url of [
      "http://example.com:4173",
      "https://127.0.0.1:4173",
      "http://10.0.0.1:4173",
      `http://127.0.0.1:${serve.port}/prefix`,
      "ftp://127.0.0.1",
      "http://user:pw@127.0.0.1:1",
    ]) {
      const refused = await agent(["capabilities", "--json"], { CAESAR_URL: url });
      expect(refused.code, url).toBe(2);
      expect(parseJsonOutput<Json>(refused).error.code, url).toBe("non_local_endpoint");
    }
  });
});

describe("caesar query mutate (cz-mutate/1) against the live server", () => {
  it("capabilities, read, then apply a request from a file with the workspace's token; a stale one is a conflict, not retried", async () => {
    const capabilities = parseJsonOutput<Json>(await agent(["mutate", "capabilities", "--json"]));
    expect(capabilities.protocol).toBe("cz-mutate/1");
    expect(capabilities.operations.map((op: Json) => op.name)).toContain("task.cancel");

    const read = parseJsonOutput<Json>(await agent(["mutate", "read", "--json"]));
    expect(read.envelope).toMatchObject({
      protocol: "cz-mutate/1",
      runId: read.runId,
      revision: read.revision,
    });

    // Cancelling a finished task changes nothing, and says so.
    const file = join(root, "request.json");
    writeFileSync(file, JSON.stringify({ ...read.envelope, arguments: { task_id: taskId } }));
    const applied = await agent(["mutate", "apply", file, "--json"]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(parseJsonOutput<Json>(applied).result).toMatchObject({ taskId, cancelled: false });

    // The same request again is a replay: a conflict (409), said, not retried; a file that is not JSON is refused here.
    const again = await agent(["mutate", "apply", file, "--json"]);
    expect(again.code).toBe(1);
    expect(parseJsonOutput<Json>(again).error.summary).toMatch(/^Conflict \(409 /);
    const notJson = join(root, "bad.json");
    writeFileSync(notJson, "{");
    const bad = await agent(["mutate", "apply", notJson, "--json"]);
    expect(bad.code).toBe(2);
    expect(parseJsonOutput<Json>(bad).error.summary).toContain("is not JSON");
  });
});

describe("caesar query against misbehaving endpoints", () => {
  let stub: Server;
  let port: number;
  const seen: string[] = [];
  let mode: "redirect" | "conflict" | "known-code" | "unknown-code" = "redirect";

  beforeAll(async () => {
    // A plain HTTP server standing in for a proxy or a racing workspace: the client's reaction is what is tested.
    stub = createServer((request, response) => {
      seen.push(`${request.method} ${request.url}`);
      if (mode === "redirect") {
        response.writeHead(302, { Location: "http://example.com/api/agent/v1" }).end();
        return;
      }
      if (request.method === "GET" && request.url === "/api/state") {
        response
          .writeHead(200, { "Content-Type": "application/json" })
          .end(JSON.stringify({ runId: "8f0c5a55-3a53-4c68-9f0e-3a6b1b1f6b10", version: 3 }));
        return;
      }
      if (mode === "known-code" || mode === "unknown-code") {
        const code = mode === "known-code" ? "change_not_found" : "from_a_later_caesar";
        response
          .writeHead(mode === "known-code" ? 404 : 400, { "Content-Type": "application/json" })
          .end(JSON.stringify({ error: { code, summary: `It says ${code}.`, detail: "Its remedy." } }));
        return;
      }
      response.writeHead(409, { "Content-Type": "application/json" }).end(
        JSON.stringify({
          error: {
            code: "stale_revision",
            summary: "Revision 3 is not the current revision (4).",
            detail: "reread",
          },
        }),
      );
    });
    await new Promise<void>((resolve) => stub.listen(0, "127.0.0.1", resolve));
    port = (stub.address() as AddressInfo).port;
  });

  afterAll(() => new Promise<void>((resolve) => stub.close(() => resolve())));

  it("refuses to follow a redirect", async () => {
    mode = "redirect";
    const result = await agent(["capabilities", "--json"], { CAESAR_URL: `http://127.0.0.1:${port}` });
    expect(result.code).toBe(1);
    expect(parseJsonOutput<Json>(result).error.code).toBe("redirect_refused");
    expect(seen.filter((line) => line.includes("example"))).toEqual([]);
  });

  it("reads the revision first, reports a conflict and does not retry", async () => {
    mode = "conflict";
    seen.length = 0;
    const result = await agent(["change", "1", "--json"], { CAESAR_URL: `http://127.0.0.1:${port}` });
    expect(result.code).toBe(1);
    const error = parseJsonOutput<Json>(result).error;
    expect(error.code).toBe("conflict");
    expect(error.summary).toContain("409 stale_revision");
    expect(error.detail).toContain("Not retried");
    expect(seen).toEqual(["GET /api/state", "POST /api/agent/v1/query"]);
  });

  it("relays the server's error when its code is one of the catalogue's, and says so when it is not", async () => {
    mode = "known-code";
    const known = await agent(["change", "9", "--json"], { CAESAR_URL: `http://127.0.0.1:${port}` });
    expect(known.code).toBe(1);
    expect(parseJsonOutput<Json>(known).error).toEqual({
      code: "change_not_found",
      summary: "It says change_not_found.",
      detail: "Its remedy.",
    });
    // A code this caesar does not know (a later version's, or not caesar's) never passes for one of its own.
    mode = "unknown-code";
    const unknown = await agent(["change", "9", "--json"], { CAESAR_URL: `http://127.0.0.1:${port}` });
    expect(unknown.code).toBe(1);
    const error = parseJsonOutput<Json>(unknown).error;
    expect(error.code).toBe("invalid_response");
    expect(error.summary).toBe("The server answered 400 (from_a_later_caesar): It says from_a_later_caesar.");
    expect(error.detail).toBe("Its remedy.");
  });

  it("says when nothing listens", async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, "127.0.0.1", () => {
        const free = (probe.address() as AddressInfo).port;
        probe.close(() => resolve(free));
      });
    });
    const result = await agent(["capabilities", "--json"], { CAESAR_URL: `http://127.0.0.1:${closed}` });
    expect(result.code).toBe(1);
    expect(parseJsonOutput<Json>(result).error.code).toBe("server_unreachable");
  });
});
