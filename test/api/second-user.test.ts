import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { git, makeRepo, tempDir, writeConfig } from "../helpers/repo.js";
import { type ServeProcess, startServe } from "../helpers/serve-process.js";
import { describeWith, type Requirement } from "../helpers/system-deps.js";

/**
 * Another account on the same machine, for real: the owner (this process) runs `caesar serve`; a second
 * Unix user (`nobody`, through setpriv or runuser) tries everything it can over loopback and on disk. It
 * must not read the token, must not obtain a session, and every mutation it tries must be 401/403 —
 * and the owner's workspace must show that nothing happened.
 *
 * Dropping privileges needs root. CI runs as root (.ci/run): there a failure to drop them fails the suite;
 * elsewhere the suite is skipped with one line saying so (test/helpers/system-deps.ts).
 */

// biome-ignore lint/suspicious/noExplicitAny: the probe's report is checked field by field
type Json = any;

const NOBODY = 65534;
const IS_ROOT = process.getuid?.() === 0;

/** The command prefix that runs a program as nobody, or why there is none. */
function findDropper(): { prefix: string[] } | { why: string } {
  if (!IS_ROOT) return { why: `running as uid ${process.getuid?.()}, not root` };
  const candidates = [
    ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "--"],
    ["runuser", "-u", "nobody", "--"],
  ];
  const problems: string[] = [];
  for (const prefix of candidates) {
    const probe = spawnSync(
      prefix[0]!,
      [...prefix.slice(1), process.execPath, "-e", "process.stdout.write(String(process.getuid()))"],
      {
        encoding: "utf8",
      },
    );
    if (probe.status === 0 && probe.stdout === String(NOBODY)) return { prefix };
    problems.push(`${prefix[0]}: ${probe.error?.message ?? (probe.stderr.trim() || `exit ${probe.status}`)}`);
  }
  return { why: `cannot run ${process.execPath} as nobody (${problems.join("; ")})` };
}

const dropper = findDropper();
/** What the suite needs: root and setpriv or runuser. find() gives the command that drops privileges. */
const SECOND_USER: Requirement = {
  what: "root and setpriv or runuser, to be a second Unix user (nobody)",
  install: `run the tests as root, as CI does (${"why" in dropper ? dropper.why : ""})`,
  find: () => ("prefix" in dropper ? dropper.prefix[0] : undefined),
};

/**
 * What nobody runs: plain Node, no caesar code (the package may not be readable by it), against the real
 * server and the real files. It reports what happened; the assertions are the owner's.
 */
const PROBE = String.raw`
import { readFileSync, readdirSync } from "node:fs";
import http from "node:http";
import { randomBytes, randomUUID } from "node:crypto";
const { url, root, tokenPath, serveDir, loginUrlShape, targets } = JSON.parse(process.argv[2]);
const origin = url.replace(/\/$/, "");
const port = new URL(url).port;
const secret = () => randomBytes(32).toString("base64url");
const attempt = (fn) => { try { return { ok: true, value: fn() }; } catch (error) { return { ok: false, code: error.code }; } };
const report = { uid: process.getuid(), files: {}, http: [] };

report.files.token = attempt(() => readFileSync(tokenPath, "utf8"));
report.files.serveDir = attempt(() => readdirSync(serveDir));
report.files.readme = attempt(() => readFileSync(root + "/README.md", "utf8").length);

// node:http, not fetch: fetch may not set Host, and a rebinding page's request carries another one.
function send(label, path, { method = "GET", headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const request = http.request(origin + path, { method, headers }, (response) => {
      let text = "";
      response.setEncoding("utf8").on("data", (chunk) => (text += chunk));
      response.on("end", () => {
        report.http.push({ label, status: response.statusCode, setCookie: response.headers["set-cookie"] ?? null, body: text });
        resolve();
      });
    });
    request.on("error", reject);
    request.end(body);
  });
}

const state = await (await fetch(origin + "/api/state")).json();
await send("session", "/api/session");
await send("login without a code", "/login");
await send("login with a guessed code", "/login?code=" + secret());
await send("rebinding", "/api/state", { headers: { Host: "evil.example:" + port } });
for (const auth of [{}, { Authorization: "Bearer " + randomBytes(32).toString("hex") }]) {
  await send("login link, " + (auth.Authorization ? "guessed token" : "no token"), "/api/login-links", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Commit-Zero": "local-demo", ...auth },
    body: "{}",
  });
}
const mutations = [
  ["task.delegate", { objective: "id > " + root + "/pwn.txt", agent: "reference" }],
  ["task.cancel", { task_id: targets.running }],
  ["question.answer", { task_id: targets.asking, question_id: targets.questionId, answer: "nobody's answer" }],
  ["change.apply", { number: targets.change }],
];
const forged = "caesar_session_" + port + "=" + secret();
const ways = {
  "no credentials": {},
  "a guessed bearer token": { Authorization: "Bearer " + randomBytes(32).toString("hex") },
  "a forged session": { Cookie: forged, Origin: origin, "X-Caesar-CSRF": secret() },
  "a forged session, cross-origin": { Cookie: forged, Origin: "http://evil.example", "X-Caesar-CSRF": secret() },
};
for (const [operation, args] of mutations) {
  for (const [way, headers] of Object.entries(ways)) {
    await send(operation + " with " + way, "/api/mutate/v1/request", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Commit-Zero": "local-demo", ...headers },
      body: JSON.stringify({
        protocol: "cz-mutate/1", requestId: randomUUID(), runId: state.runId, revision: state.version,
        operation, arguments: args,
      }),
    });
  }
}
process.stdout.write(JSON.stringify(report));
`;

describeWith("a second Unix user, with the owner's server running", SECOND_USER, () => {
  let scratchMode: number;
  let root: string;
  let serve: ServeProcess;
  let probeDir: string;
  const targets = { finished: "", running: "", asking: "", questionId: "q_fixture01", change: 0 };

  beforeAll(async () => {
    // The test's scratch directory is the owner's (0700): let nobody through it (not list it), so that
    // what stops nobody below is caesar's private directory, not a parent it cannot traverse.
    scratchMode = statSync(tmpdir()).mode & 0o777;
    chmodSync(tmpdir(), 0o711);
    root = makeRepo({ "README.md": "# shared\n" });
    writeConfig(root, "", ["asker", "hang"]);
    git(root, "add", ".");
    git(root, "commit", "-qm", "config");
    chmodSync(root, 0o755);
    const finished = await runCaesar(
      ["run", "--json", "--agent", "reference", 'create a.txt containing "a"'],
      {
        cwd: root,
        timeoutMs: 90_000,
      },
    );
    const done = parseJsonOutput<{ task_id: string; state: { change_number: number } }>(finished);
    targets.finished = done.task_id;
    targets.change = done.state.change_number;
    for (const [agent, key] of [
      ["hang", "running"],
      ["asker", "asking"],
    ] as const) {
      const started = await runCaesar(["run", "--json", "--detach", "--agent", agent, "wait"], { cwd: root });
      targets[key] = parseJsonOutput<{ task_id: string }>(started).task_id;
    }
    const question = join(root, ".caesar", "tasks", targets.asking, "questions", "q_fixture01.json");
    for (const deadline = Date.now() + 60_000; !existsSync(question); ) {
      if (Date.now() > deadline) throw new Error(`task ${targets.asking} never asked its question`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    serve = await startServe(root);
    probeDir = tempDir("caesar-probe-");
    chmodSync(probeDir, 0o755);
    writeFileSync(join(probeDir, "probe.mjs"), PROBE, { mode: 0o644 });
  }, 240_000);

  afterAll(async () => {
    await serve?.stop();
    if (targets.running) await runCaesar(["cancel", targets.running], { cwd: root });
    if (targets.asking) await runCaesar(["cancel", targets.asking], { cwd: root });
    chmodSync(tmpdir(), scratchMode);
  });

  function probeAsNobody(): Json {
    const prefix = (dropper as { prefix: string[] }).prefix;
    const serveDir = join(root, ".caesar", "state", "serve");
    const input = JSON.stringify({
      url: serve.url,
      root,
      tokenPath: join(serveDir, "token"),
      serveDir,
      targets,
    });
    const out = execFileSync(
      prefix[0]!,
      [...prefix.slice(1), process.execPath, join(probeDir, "probe.mjs"), input],
      {
        encoding: "utf8",
        cwd: probeDir,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/nonexistent" },
        timeout: 120_000,
      },
    );
    return JSON.parse(out);
  }

  it("cannot read the token, cannot obtain a session, and every mutation it tries is 401/403; nothing happened", () => {
    const token = readFileSync(join(root, ".caesar", "state", "serve", "token"), "utf8").trim();
    const tasksBefore = readdirSync(join(root, ".caesar", "tasks")).sort();
    const report = probeAsNobody();
    expect(report.uid).toBe(NOBODY);

    // The workspace is readable to nobody; the private directory and the token are not.
    expect(report.files.readme).toEqual({ ok: true, value: "# shared\n".length });
    expect(report.files.token).toEqual({ ok: false, code: "EACCES" });
    expect(report.files.serveDir).toEqual({ ok: false, code: "EACCES" });

    const byLabel = new Map<string, Json>(report.http.map((entry: Json) => [entry.label, entry]));
    for (const entry of report.http) {
      expect(entry.body, entry.label).not.toContain(token);
      expect(entry.setCookie, entry.label).toBeNull();
    }
    expect(JSON.parse(byLabel.get("session").body).authenticated).toBe(false);
    expect(byLabel.get("login without a code").status).toBe(403);
    expect(byLabel.get("login with a guessed code").status).toBe(403);
    expect(byLabel.get("rebinding").status).toBe(403);
    expect(byLabel.get("login link, no token").status).toBe(401);
    expect(byLabel.get("login link, guessed token").status).toBe(401);

    const mutations = report.http.filter((entry: Json) => /^(task|question|change)\./.test(entry.label));
    expect(mutations).toHaveLength(16);
    for (const entry of mutations)
      expect([401, 403], `${entry.label}: ${entry.body}`).toContain(entry.status);

    // And the owner's workspace shows it: no new task, the running one runs, the question waits, nothing staged.
    expect(readdirSync(join(root, ".caesar", "tasks")).sort()).toEqual(tasksBefore);
    const state = (id: string) =>
      JSON.parse(readFileSync(join(root, ".caesar", "tasks", id, "state.json"), "utf8")) as Json;
    expect(state(targets.running).phase).toBe("running");
    expect(state(targets.running).cancel_requested ?? null).toBeNull();
    expect(existsSync(join(root, ".caesar", "tasks", targets.asking, "answers", "q_fixture01.json"))).toBe(
      false,
    );
    expect(state(targets.finished).applied ?? null).toBeNull();
    expect(git(root, "diff", "--cached", "--name-only")).toBe("");
    expect(existsSync(join(root, "pwn.txt"))).toBe(false);
  });
});
