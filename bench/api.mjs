#!/usr/bin/env node
// bench/api: latency of the agent query contract on a big workspace, against a naive full rescan measured
// in the same run.
//
//   npm run build && npm run bench:api [-- --tasks 10000 --events 20 --concurrency 8 --requests 2000]
//
// Builds a workspace of 10,000 task directories / 200,000 events (files written directly: valid
// state.json, events.jsonl; real git trees for the diffs), starts the real `caesar serve`, and sends
// timeline.read and change.read from concurrent clients. Prints p50/p99, the index build time and the
// server's memory; then the same two questions answered by rescanning every task directory (what a server
// without an index would do) and the ratio. Target on a 2-core machine: p50 <= 20 ms under load.
import { execFileSync, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const { values: opts } = parseArgs({
  options: {
    tasks: { type: "string", default: "10000" },
    events: { type: "string", default: "20" },
    concurrency: { type: "string", default: "8" },
    requests: { type: "string", default: "2000" },
    baseline: { type: "string", default: "5" },
    keep: { type: "boolean", default: false },
  },
});
const TASKS = Number(opts.tasks);
const EVENTS = Number(opts.events);
const CONCURRENCY = Number(opts.concurrency);
const REQUESTS = Number(opts.requests);
const BASELINE_RUNS = Number(opts.baseline);
const AGENTS = ["codex", "claude", "opencode", "gemini", "reference"];
const TREES = 50;
const caesar = fileURLToPath(new URL("../bin/caesar.js", import.meta.url));

const root = mkdtempSync(join(tmpdir(), "caesar-bench-api-"));
const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: "b",
  GIT_AUTHOR_EMAIL: "b@b",
  GIT_COMMITTER_NAME: "b",
  GIT_COMMITTER_EMAIL: "b@b",
};
const gitRun = (...args) => execFileSync("git", args, { cwd: root, env: gitEnv, encoding: "utf8" }).trim();

// --- the workspace -------------------------------------------------------------------------------------
const started = performance.now();
gitRun("init", "-q", "--initial-branch=main");
writeFileSync(join(root, ".gitignore"), ".caesar/\n");
for (let f = 0; f < 20; f++) writeFileSync(join(root, `module-${f}.js`), `export const value${f} = ${f};\n`);
gitRun("add", ".");
gitRun("commit", "-qm", "base");
const trees = [gitRun("rev-parse", "HEAD^{tree}")];
for (let i = 1; i <= TREES; i++) {
  writeFileSync(join(root, `module-${i % 20}.js`), `export const value${i % 20} = ${i};\n// change ${i}\n`);
  writeFileSync(join(root, `added-${i}.js`), `export function added${i}() {\n  return ${i};\n}\n`);
  gitRun("add", ".");
  gitRun("commit", "-qm", `change ${i}`);
  trees.push(gitRun("rev-parse", "HEAD^{tree}"));
}
const tasksDir = join(root, ".caesar", "tasks");
mkdirSync(tasksDir, { recursive: true });
const base = Date.UTC(2030, 0, 1);
for (let n = 1; n <= TASKS; n++) {
  const id = `t_${n.toString(16).padStart(8, "0")}`;
  const dir = join(tasksDir, id);
  mkdirSync(dir);
  const agent = AGENTS[n % AGENTS.length];
  const created = new Date(base + n * 60_000).toISOString();
  const finished = new Date(base + n * 60_000 + EVENTS * 1000).toISOString();
  const pair = 1 + (n % TREES);
  const summary = `Task ${n}: changed module-${pair % 20}.js and added added-${pair}.js.`;
  const state = {
    version: 1,
    id,
    phase: "finished",
    created_at: created,
    updated_at: finished,
    agent,
    role: null,
    objective: `Bench objective number ${n}`,
    mode: "write",
    isolation: "inplace",
    depth: 0,
    parent_id: null,
    root,
    workspace: root,
    worktree: null,
    branch: null,
    base_ref: null,
    start_tree: trees[0],
    end_tree: trees[pair],
    result_commit: null,
    materialised: [],
    linked: [],
    conductor: { pid: 1 },
    agent_process: null,
    waiting_for_slot: null,
    command: agent,
    started_at: created,
    finished_at: finished,
    deadline_at: null,
    outcome: "succeeded",
    exit: { code: 0, signal: null },
    report_status: "success",
    report: {
      protocol: "caesar.report/v1",
      task_id: id,
      status: "success",
      summary,
      details: "",
      commands_run: [],
      changes: [{ path: `added-${pair}.js`, action: "added" }],
      findings: [],
      questions: [],
      next_steps: [],
      artifacts: [],
      usage: {},
      changes_verified_by: "git",
      report_source: "file",
    },
    error: null,
    cancel_requested: null,
    applied: null,
    cleaned_at: null,
    change_number: n,
  };
  writeFileSync(join(dir, "state.json"), JSON.stringify(state));
  const lines = [];
  for (let e = 0; e < EVENTS; e++) {
    const at = new Date(base + n * 60_000 + e * 1000).toISOString();
    const body =
      e === 0
        ? { type: "started", agent }
        : e === EVENTS - 1
          ? { type: "finished", status: "success", summary, outcome: "succeeded" }
          : e % 3 === 0
            ? {
                type: "tool_use",
                tool: "shell",
                id: `c${e}`,
                status: "succeeded",
                output_summary: "ok",
                duration_ms: 12,
              }
            : e % 3 === 1
              ? { type: "thinking", text: `Thinking about step ${e} of task ${n}.` }
              : { type: "message", text: `Step ${e} done.` };
    lines.push(JSON.stringify({ protocol: "caesar.event/v1", seq: e, at, task_id: id, ...body }));
  }
  writeFileSync(join(dir, "events.jsonl"), `${lines.join("\n")}\n`);
}
writeFileSync(join(root, ".caesar", "config.toml"), "");
console.log(
  `workspace   ${TASKS} tasks, ${TASKS * EVENTS} events, ${TREES} distinct diffs (written in ${((performance.now() - started) / 1000).toFixed(1)} s)`,
);

// --- the server ----------------------------------------------------------------------------------------
const server = spawn(process.execPath, [caesar, "serve", "--json", "--port", "0"], {
  cwd: root,
  stdio: ["ignore", "pipe", "inherit"],
});
const facts = await new Promise((resolve, reject) => {
  let out = "";
  server.stdout.setEncoding("utf8").on("data", (chunk) => {
    out += chunk;
    if (out.includes("\n")) resolve(JSON.parse(out.slice(0, out.indexOf("\n"))));
  });
  server.once("exit", (code) => reject(new Error(`caesar serve exited (${code})`)));
});
const url = facts.url;
console.log(
  `index       built in ${(facts.indexMs / 1000).toFixed(2)} s at start (${facts.tasks} tasks, ${facts.timelineEntries} timeline entries)`,
);

const state = await (await fetch(`${url}api/state`)).json();
function query(operation, args) {
  return fetch(`${url}api/agent/v1/query`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Commit-Zero": "local-demo" },
    body: JSON.stringify({
      protocol: "cz-agent/1",
      requestId: randomUUID(),
      runId: state.runId,
      revision: state.version,
      operation,
      arguments: args,
    }),
  });
}

const random = (n) => 1 + Math.floor(Math.random() * n);
const TIMELINE_ARGS = () => {
  const kind = Math.random();
  if (kind < 1 / 3) return { limit: 50 };
  if (kind < 2 / 3) return { actor: AGENTS[random(AGENTS.length) - 1], limit: 50 };
  return { before: random(TASKS * EVENTS), limit: 50 };
};
const CHANGE_ARGS = () => ({ number: random(TASKS) });

async function load(operation, makeArgs, concurrency, total) {
  const latencies = [];
  let next = 0;
  let failures = 0;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next += 1;
        const t0 = performance.now();
        const response = await query(operation, makeArgs());
        await response.arrayBuffer();
        latencies.push(performance.now() - t0);
        if (response.status !== 200) failures += 1;
      }
    }),
  );
  const seconds = (performance.now() - began) / 1000;
  return { ...percentiles(latencies), rps: total / seconds, failures };
}

function percentiles(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return { p50: at(0.5), p99: at(0.99), n: sorted.length };
}

const ms = (x) => `${x.toFixed(1)} ms`;
// Warm up (first diffs, file caches), then measure.
await load("change.read", CHANGE_ARGS, CONCURRENCY, 200);
await load("timeline.read", TIMELINE_ARGS, CONCURRENCY, 200);
const results = {};
for (const [operation, makeArgs] of [
  ["timeline.read", TIMELINE_ARGS],
  ["change.read", CHANGE_ARGS],
]) {
  const serial = await load(operation, makeArgs, 1, Math.min(500, REQUESTS));
  const loaded = await load(operation, makeArgs, CONCURRENCY, REQUESTS);
  results[operation] = loaded;
  console.log(
    `${operation.padEnd(14)} ${CONCURRENCY} clients: p50 ${ms(loaded.p50)}, p99 ${ms(loaded.p99)}, ${loaded.rps.toFixed(0)} req/s` +
      ` · 1 client: p50 ${ms(serial.p50)}, p99 ${ms(serial.p99)}${loaded.failures ? ` · ${loaded.failures} non-200!` : ""}`,
  );
}
const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${server.pid}/status`, "utf8"))?.[1];
if (rss) console.log(`server      ${(Number(rss) / 1024).toFixed(0)} MiB resident`);
server.kill("SIGTERM");

// --- the baseline: answer the same questions by rescanning every task directory ------------------------
function naiveTimeline(args) {
  const entries = [];
  for (const id of readdirSync(tasksDir)) {
    const taskState = JSON.parse(readFileSync(join(tasksDir, id, "state.json"), "utf8"));
    for (const line of readFileSync(join(tasksDir, id, "events.jsonl"), "utf8").split("\n")) {
      if (line === "") continue;
      const event = JSON.parse(line);
      const actor = event.type === "answer" ? "user" : taskState.agent;
      if (args.actor === undefined || args.actor === actor) entries.push({ at: event.at, actor, event });
    }
  }
  entries.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  return entries.slice(0, args.limit);
}
function naiveChange(number) {
  for (const id of readdirSync(tasksDir)) {
    const taskState = JSON.parse(readFileSync(join(tasksDir, id, "state.json"), "utf8"));
    if (taskState.change_number !== number) continue;
    const patch = execFileSync(
      "git",
      ["diff", "--no-color", "--no-renames", taskState.start_tree, taskState.end_tree],
      { cwd: root, encoding: "utf8" },
    );
    return { taskState, patch };
  }
  return undefined;
}
const baseline = { "timeline.read": [], "change.read": [] };
for (let i = 0; i < BASELINE_RUNS; i++) {
  let t0 = performance.now();
  naiveTimeline(TIMELINE_ARGS());
  baseline["timeline.read"].push(performance.now() - t0);
  t0 = performance.now();
  naiveChange(random(TASKS));
  baseline["change.read"].push(performance.now() - t0);
}
for (const operation of ["timeline.read", "change.read"]) {
  const naive = percentiles(baseline[operation]);
  console.log(
    `baseline    ${operation.padEnd(14)} full rescan, 1 client, ${BASELINE_RUNS} runs: p50 ${ms(naive.p50)} — the index is ${(naive.p50 / results[operation].p50).toFixed(0)}x faster at p50 while serving ${CONCURRENCY} clients`,
  );
}
const target = Math.max(results["timeline.read"].p50, results["change.read"].p50) <= 20;
console.log(`target      p50 <= 20 ms under load: ${target ? "met" : "NOT met"}`);
if (!opts.keep) rmSync(root, { recursive: true, force: true });
else console.log(`kept        ${root}`);
