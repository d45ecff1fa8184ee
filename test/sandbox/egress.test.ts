import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createServer as createNetServer } from "node:net";
import { userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { readServiceInfo } from "../../src/engine/conductor/service-files.js";
import { bwrapArgs } from "../../src/sandbox/bwrap.js";
import { EgressProxy, type EgressRefusal } from "../../src/sandbox/egress-proxy.js";
import { EGRESS_INSIDE, proxyEnvironment, relayCommand, relayPlan } from "../../src/sandbox/relay.js";
import { parseHostRules } from "../../src/support/host-rules.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { git, readJson, taskDir, tempDir, writeFiles } from "../helpers/repo.js";
import { itWith } from "../helpers/system-deps.js";
import { BUBBLEWRAP, project, run } from "./probe-project.js";

// A sandboxed agent's network: no network namespace of the host's, only caesar's egress proxy (and the
// loopback ports its rules name, forwarded), which lets through what the task's hosts allow and records
// the rest against the task.

/** Asks its way out every way an agent could, printing one line per way: `<WAY> <status or error>`. */
const PROBE = `
const http = require("node:http");
const net = require("node:net");
const [port, other] = process.argv.slice(-2).map(Number);
const proxy = new URL(process.env.HTTP_PROXY || "http://127.0.0.1:3128");
const say = (way, what) => console.log(way + " " + what);
const get = (way, options) => new Promise((done) => {
  const req = http.get({ timeout: 5000, ...options }, (res) => {
    let body = ""; res.on("data", (d) => (body += d)); res.on("end", () => { say(way, res.statusCode + " " + body.trim()); done(); });
  });
  req.on("error", (e) => { say(way, "ERROR " + e.code); done(); });
});
const tunnel = (way, target) => new Promise((done) => {
  const req = http.request({ host: proxy.hostname, port: proxy.port, method: "CONNECT", path: target, timeout: 5000 });
  req.on("connect", (res, socket) => {
    if (res.statusCode !== 200) { say(way, res.statusCode); socket.destroy(); return done(); }
    socket.write("GET / HTTP/1.1\\r\\nHost: " + target + "\\r\\nConnection: close\\r\\n\\r\\n");
    let text = ""; socket.on("data", (d) => (text += d)); socket.on("end", () => { say(way, "200 " + text.split("\\r\\n\\r\\n")[1].trim()); done(); });
  });
  req.on("response", (res) => { say(way, res.statusCode); done(); });
  req.on("error", (e) => { say(way, "ERROR " + e.code); done(); });
  req.end();
});
(async () => {
  await get("DIRECT", { host: "127.0.0.1", port });
  await get("DIRECT-OTHER", { host: "127.0.0.1", port: other });
  await get("PROXIED", { host: proxy.hostname, port: proxy.port, path: "http://127.0.0.1:" + port + "/", headers: { host: "127.0.0.1:" + port } });
  await tunnel("TUNNEL", "127.0.0.1:" + port);
  await tunnel("TUNNEL-OTHER", "127.0.0.1:" + other);
  await tunnel("TUNNEL-LOCALHOST", "localhost:" + port);
  await tunnel("TUNNEL-EVIL", "evil.example:443");
})();
`;

async function until(done: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

interface Listener {
  port: number;
  hits: () => number;
  close: () => Promise<void>;
}

async function hostListener(): Promise<Listener> {
  let hits = 0;
  const server: Server = createServer((_req, res) => {
    hits++;
    res.end("hello from the host\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    hits: () => hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A project whose agent runs the probe against `port` (and `other`, never allowed). */
function probeProject(allowHosts: string[], port: number, other: number): string {
  const root = project(
    `node probe.js ${port} ${other}`,
    "required",
    `allow_hosts = ${JSON.stringify(allowHosts)}`,
  );
  writeFiles(root, { "probe.js": PROBE });
  git(root, "add", ".");
  git(root, "commit", "-qm", "probe");
  return root;
}

/** The probe's lines, by way. */
function ways(raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of raw.split("\n")) {
    const match = /^([A-Z-]+) (.*)$/.exec(line);
    if (match) out[match[1]!] = match[2]!;
  }
  return out;
}

describe("a sandboxed agent's network goes through caesar's egress proxy", () => {
  let allowed: Listener;
  let other: Listener;
  beforeAll(async () => {
    allowed = await hostListener();
    other = await hostListener();
  });
  afterAll(async () => {
    await allowed.close();
    await other.close();
  });

  itWith(
    BUBBLEWRAP,
    "network on: what [sandbox] allow_hosts names answers (forwarded, proxied, tunnelled); nothing else does, and each refusal is on record",
    async () => {
      const root = probeProject([`127.0.0.1:${allowed.port}`], allowed.port, other.port);
      const before = allowed.hits();
      const result = await run(root, ["--network", "on", "--mode", "write"]);
      const seen = ways(result.raw);
      expect(seen, result.raw).toMatchObject({
        DIRECT: "200 hello from the host",
        PROXIED: "200 hello from the host",
        TUNNEL: "200 hello from the host",
        "TUNNEL-OTHER": "403",
        "TUNNEL-LOCALHOST": "403",
        "TUNNEL-EVIL": "403",
      });
      expect(seen["DIRECT-OTHER"]).toMatch(/^ERROR (ECONNREFUSED|ENETUNREACH)/);
      expect(allowed.hits() - before).toBe(3);
      expect(other.hits()).toBe(0);
      // Each refused host once, in the report's findings and as an event.
      const titles = result.state.report.findings.map((finding) => finding.title);
      expect(titles).toEqual(
        expect.arrayContaining([
          `caesar refused the agent's \`connect 127.0.0.1:${other.port}\``,
          "caesar refused the agent's `connect evil.example:443`",
        ]),
      );
      const log = readFileSync(join(taskDir(root, result.task_id), "events.jsonl"), "utf8");
      expect(log.match(/"code":"egress_refused"/g)?.length).toBe(3);
      expect(result.state.outcome).toBe("succeeded");

      // The same agent without the sandbox reaches whatever it likes.
      const open = await run(project(`node ${join(root, "probe.js")} ${allowed.port} ${other.port}`, "off"), [
        "--network",
        "on",
      ]);
      expect(ways(open.raw)["DIRECT-OTHER"]).toBe("200 hello from the host");
      expect(other.hits()).toBe(1);
    },
  );

  itWith(
    BUBBLEWRAP,
    "network off: [sandbox] allow_hosts does not apply — only the agent's model would",
    async () => {
      const root = probeProject([`127.0.0.1:${allowed.port}`], allowed.port, other.port);
      const before = allowed.hits();
      const result = await run(root, ["--network", "off", "--mode", "write"]);
      const seen = ways(result.raw);
      expect(seen.DIRECT, result.raw).toMatch(/^ERROR (ECONNREFUSED|ENETUNREACH)/);
      expect(seen.PROXIED).toMatch(/^403/);
      expect(seen.TUNNEL).toBe("403");
      expect(allowed.hits() - before).toBe(0);
    },
  );

  itWith(
    BUBBLEWRAP,
    "a wildcard never reaches the host's own networks: `*` opens no loopback port",
    async () => {
      const root = probeProject(["*"], allowed.port, other.port);
      const before = allowed.hits();
      const result = await run(root, ["--network", "on", "--mode", "write"]);
      const seen = ways(result.raw);
      expect(seen.TUNNEL, result.raw).toBe("403");
      expect(seen["TUNNEL-LOCALHOST"]).toBe("403");
      expect(seen.DIRECT).toMatch(/^ERROR/);
      expect(allowed.hits() - before).toBe(0);
    },
  );

  itWith(
    BUBBLEWRAP,
    "the conductor service killed with SIGKILL mid-task: the next one opens the task's proxy again, and the agent it took over reaches its hosts",
    async () => {
      const root = probeProject([`127.0.0.1:${allowed.port}`], allowed.port, other.port);
      // The agent waits for a go, given once the service that started it is dead and another took over.
      writeFiles(root, {
        "wait.sh": `touch "$CAESAR_TASK_DIR/ready"\nwhile [ ! -e "$CAESAR_TASK_DIR/go" ]; do sleep 0.1; done\nnode probe.js ${allowed.port} ${other.port}\n`,
      });
      const config = readFileSync(join(root, ".caesar/config.toml"), "utf8");
      const agent = /bin = "(.*)"/.exec(config)![1]!;
      writeFileSync(
        agent,
        `#!/bin/sh\nsh wait.sh\nprintf '{"protocol":"caesar.report/v1","status":"success","summary":"probed"}' > "$CAESAR_REPORT_PATH"\n`,
      );
      git(root, "add", ".");
      git(root, "commit", "-qm", "wait");
      const started = await runCaesar(
        ["run", "--detach", "--json", "--agent", "probe", "--network", "on", "probe"],
        {
          cwd: root,
        },
      );
      const id = parseJsonOutput<{ task_id: string }>(started).task_id;
      const dir = taskDir(root, id);
      await until(() => existsSync(join(dir, "ready")));
      const first = readServiceInfo(root);
      expect(first).toBeDefined();
      process.kill(first!.pid, "SIGKILL");
      await until(() => readServiceInfo(root) === undefined);
      const ps = await runCaesar(["ps", "--json"], { cwd: root });
      expect(ps.code, ps.stderr).toBe(0);
      await until(() => readServiceInfo(root) !== undefined);
      writeFileSync(join(dir, "go"), "");
      await until(() => readJson<{ phase: string }>(join(dir, "state.json")).phase === "finished", 60_000);
      const seen = ways(readFileSync(join(dir, "raw.log"), "utf8"));
      expect(seen.DIRECT).toBe("200 hello from the host");
      expect(seen.TUNNEL).toBe("200 hello from the host");
      expect(seen["TUNNEL-EVIL"]).toBe("403");
      expect(readJson<{ outcome: string }>(join(dir, "state.json")).outcome).toBe("succeeded");
    },
  );

  itWith(
    BUBBLEWRAP,
    "a project whose path is too long for a socket: its broker and proxy listen in /tmp/caesar-<uid>, gone with the task",
    async () => {
      const short = probeProject([`127.0.0.1:${allowed.port}`], allowed.port, other.port);
      const root = join(
        tempDir("caesar-long-"),
        "a-project-whose-path-is-long-enough-to-overflow-a-socket-path",
      );
      renameSync(short, root);
      const result = await run(root, ["--network", "on", "--mode", "write"]);
      expect(result.state.outcome, result.raw).toBe("succeeded");
      expect(ways(result.raw).TUNNEL).toBe("200 hello from the host");
      // Removed right after the task's final state is written (by the conductor that wrote it).
      const base = `/tmp/caesar-${userInfo().uid}`;
      const controlDir = join(root, ".git", "caesar", "tasks", result.task_id);
      const names = [join(controlDir, "egress"), join(controlDir, "broker")].map((folder) =>
        createHash("sha256").update(folder).digest("hex").slice(0, 20),
      );
      await until(() => {
        const left = existsSync(base) ? readdirSync(base) : [];
        return names.every((name) => !left.includes(name));
      }, 10_000);
    },
  );

  itWith(
    BUBBLEWRAP,
    "a Unix socket of the host's runtime folders (a session bus, docker's) is out of reach, though it needs no network",
    async () => {
      const folder = join("/run", `caesar-test-${process.pid}-${Date.now()}`);
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      const socket = join(folder, "s.sock");
      let reached = 0;
      const server = createNetServer((connection) => {
        reached++;
        connection.end("hello from a host socket\n");
      });
      await new Promise<void>((resolve) => server.listen(socket, resolve));
      try {
        const script = `node -e 'require("net").connect(${JSON.stringify(socket)}).on("data",d=>console.log("GOT "+d)).on("error",e=>console.log("REFUSED "+e.code))'`;
        const sandboxed = await run(project(script, "required"), ["--network", "on", "--mode", "write"]);
        expect(sandboxed.raw).toMatch(/REFUSED (ENOENT|ECONNREFUSED|EACCES)/);
        expect(reached).toBe(0);
        const open = await run(project(script, "off"), ["--network", "on", "--mode", "write"]);
        expect(open.raw).toContain("GOT hello from a host socket");
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        rmSync(folder, { recursive: true, force: true });
      }
    },
  );

  itWith(BUBBLEWRAP, "without socat, a relay of Node's own serves the proxy inside the sandbox", async () => {
    const folder = tempDir("caesar-egress-");
    const refused: EgressRefusal[] = [];
    const proxy = new EgressProxy(
      join(folder, "egress"),
      parseHostRules([`127.0.0.1:${allowed.port}`]),
      (r) => refused.push(r),
    );
    await proxy.listen();
    try {
      const plan = relayPlan(proxy.ports);
      const profile = {
        visible: [],
        writable: [],
        readOnly: [],
        hidden: [],
        binds: [{ source: proxy.folder, target: EGRESS_INSIDE, readOnly: true }],
        network: false,
      };
      const command = relayCommand(plan, { kind: "node", path: process.execPath }, [
        process.execPath,
        "-e",
        PROBE,
        String(allowed.port),
        String(other.port),
      ]);
      const child = spawn("bwrap", [...bwrapArgs(profile, "/"), ...command], {
        env: { PATH: process.env.PATH ?? "", ...proxyEnvironment(plan) },
      });
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => (out += chunk));
      const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
      expect(code, out).toBe(0);
      const seen = ways(out);
      expect(seen.DIRECT, out).toBe("200 hello from the host");
      expect(seen.TUNNEL).toBe("200 hello from the host");
      expect(seen["TUNNEL-EVIL"]).toBe("403");
      expect(refused.map((r) => `${r.host}:${r.port}`)).toContain("evil.example:443");
    } finally {
      proxy.close();
    }
  });
});
