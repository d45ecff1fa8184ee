#!/usr/bin/env node
// bench/cluster: tasks on a pool of workers (NATS JetStream + a git remote), measured in one run against
// baselines of the same run:
//
//   1. throughput: 60 tasks of a sleeping agent drained by one worker, then by three (same --max-parallel):
//      the ratio of the two wall times (ideal: 3x);
//   2. per-task overhead: `caesar run --on nats://…` of a no-op agent against the same `caesar run` local,
//      interleaved run by run;
//   3. memory per running task: one worker's resident memory with 20 tasks running at once, against the same
//      worker idle (after one task, so code loaded once is not counted). Target: <= 15 MiB per task —
//      a local task costs a Node conductor process of its own (its peak is printed beside);
//   4. cancel: from the cancel recorded here to the agent's process group gone on its worker.
//
//   npm run build && node bench/cluster.mjs [--tasks 60] [--sleep 3] [--parallel 4] [--runs 8] [--concurrent 20]
//
// Needs nats-server (Debian: apt-get install nats-server). Everything it makes lives in one temporary
// directory, removed at the end; every process it starts is stopped.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(args[at + 1]);
};
const TASKS = option("tasks", 60);
const SLEEP_S = option("sleep", 3);
const PARALLEL = option("parallel", 4);
const RUNS = option("runs", 8);
const CONCURRENT = option("concurrent", 20);

const caesar = fileURLToPath(new URL("../bin/caesar.js", import.meta.url));
const natsServer = ["/usr/sbin/nats-server", "/usr/local/bin/nats-server", "/usr/bin/nats-server"].find(
  existsSync,
);
if (!natsServer) {
  console.error("bench/cluster needs nats-server (apt-get install nats-server).");
  process.exit(2);
}
const scratch = mkdtempSync(join(tmpdir(), "caesar-bench-cluster-"));
const children = [];
const MiB = 1024 * 1024;

function freePort() {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitFor(check, what, timeoutMs = 600_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const git = (cwd, ...rest) =>
  execFileSync("git", ["-c", "user.name=b", "-c", "user.email=b@b", ...rest], {
    cwd,
    encoding: "utf8",
  }).trim();

// The shared remote, its first commit declaring the agents, and clones: one submitter, three workers.
const remote = join(scratch, "remote.git");
execFileSync("git", ["init", "-q", "--bare", "-b", "main", remote]);
const seed = join(scratch, "seed");
mkdirSync(join(seed, ".caesar"), { recursive: true });
const sleeper = join(scratch, "sleeper.sh");
writeFileSync(
  sleeper,
  '#!/bin/sh\nsleep "$SLEEP_S"\nprintf \'{"protocol":"caesar.report/v1","status":"success","summary":"slept"}\' > "$CAESAR_REPORT_PATH"\n',
  { mode: 0o755 },
);
for (let i = 0; i < 200; i++) writeFileSync(join(seed, `file-${i}.txt`), `content ${i}\n`);
writeFileSync(join(seed, ".gitignore"), ".caesar/tasks/\n.caesar/wt/\n.caesar/state/\n");
const agent = (id, sleep) => `[[agent]]\nid = "${id}"\nbin = "${sleeper}"\nenv = { SLEEP_S = "${sleep}" }\n`;
writeFileSync(
  join(seed, ".caesar", "config.toml"),
  `[policy]\nmax_parallel = 64\n\n${agent("sleeper", SLEEP_S)}\n${agent("noop", 0)}\n${agent("holder", 600)}`,
);
execFileSync("git", ["init", "-q", "-b", "main", seed]);
git(seed, "add", ".");
git(seed, "commit", "-qm", "init");
git(seed, "push", "-q", remote, "main");
const clone = (name) => {
  const dir = join(scratch, name);
  execFileSync("git", ["clone", "-q", "--no-local", remote, dir]);
  return dir;
};
const submitter = clone("submitter");
const workerClones = [clone("w1"), clone("w2"), clone("w3")];

const port = await freePort();
const url = `nats://127.0.0.1:${port}`;
const natsLog = join(scratch, "nats.log");
children.push(
  spawn(natsServer, ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", join(scratch, "js")], {
    stdio: ["ignore", openSync(natsLog, "a"), openSync(natsLog, "a")],
  }),
);
await waitFor(
  () => existsSync(natsLog) && readFileSync(natsLog, "utf8").includes("Server is ready"),
  "nats-server",
);

function startWorker(dir, name, parallel) {
  let out = "";
  const child = spawn(
    process.execPath,
    [caesar, "worker", "--json", "--on", url, "--name", name, "--max-parallel", String(parallel)],
    { cwd: dir, stdio: ["ignore", "pipe", openSync(join(scratch, `${name}.log`), "a")] },
  );
  children.push(child);
  child.stdout.setEncoding("utf8").on("data", (chunk) => {
    out += chunk;
  });
  return { child, ready: () => waitFor(() => out.includes('"ready"'), `worker ${name}`) };
}

async function stopWorker(worker) {
  if (worker.child.exitCode !== null) return;
  const exited = new Promise((resolve) => worker.child.once("exit", resolve));
  worker.child.kill("SIGTERM");
  setTimeout(() => worker.child.kill("SIGTERM"), 3_000).unref();
  await exited;
}

const run = (cwd, rest) => {
  const result = spawnSync(process.execPath, [caesar, ...rest], { cwd, encoding: "utf8" });
  if (result.status !== 0 && !rest.includes("--detach")) return result;
  if (result.status !== 0) throw new Error(`caesar ${rest.join(" ")}: ${result.stderr}${result.stdout}`);
  return result;
};

async function submitMany(count, agentId, label) {
  const ids = [];
  // A few at a time: each is a Node process; the queue fills while no worker runs.
  for (let i = 0; i < count; i += 6) {
    const batch = Array.from(
      { length: Math.min(6, count - i) },
      (_, k) =>
        new Promise((resolve, reject) => {
          const child = spawn(
            process.execPath,
            [caesar, "run", "--on", url, "--agent", agentId, "--detach", "--json", `${label} ${i + k}`],
            { cwd: submitter },
          );
          let out = "";
          child.stdout.setEncoding("utf8").on("data", (chunk) => {
            out += chunk;
          });
          child.on("exit", (code) =>
            code === 0 ? resolve(JSON.parse(out).task_id) : reject(new Error(out)),
          );
        }),
    );
    ids.push(...(await Promise.all(batch)));
  }
  return ids;
}

const stateOf = (id) => {
  try {
    return JSON.parse(readFileSync(join(submitter, ".caesar", "tasks", id, "state.json"), "utf8"));
  } catch {
    return { phase: "?" };
  }
};
const allFinished = (ids) => ids.every((id) => stateOf(id).phase === "finished");

async function drain(label, names) {
  const ids = await submitMany(TASKS, "sleeper", label);
  const workers = names.map((name, i) => startWorker(workerClones[i], `${label}-${name}`, PARALLEL));
  await Promise.all(workers.map((worker) => worker.ready()));
  const started = performance.now();
  await waitFor(() => allFinished(ids), `${label}: ${TASKS} tasks`);
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(workers.map(stopWorker));
  const failed = ids.filter((id) => stateOf(id).outcome !== "succeeded");
  if (failed.length > 0)
    throw new Error(`${label}: ${failed.length} task(s) did not succeed: ${failed.slice(0, 3)}`);
  return seconds;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const rssOf = (pid) => {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match[1]) * 1024;
};
// Resident memory moves with the garbage collector: the median of a few samples.
async function sampledRss(pid) {
  const samples = [];
  for (let i = 0; i < 7; i++) {
    samples.push(rssOf(pid));
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return median(samples);
}

try {
  console.log(
    `bench/cluster · nats-server ${url} · ${TASKS} tasks of ${SLEEP_S}s · --max-parallel ${PARALLEL}`,
  );

  // 1. Throughput: one worker, then three.
  const one = await drain("one", ["w1"]);
  const three = await drain("three", ["w1", "w2", "w3"]);
  console.log(
    `throughput  1 worker: ${one.toFixed(1)} s (${(TASKS / one).toFixed(2)} tasks/s) · 3 workers: ${three.toFixed(1)} s (${(TASKS / three).toFixed(2)} tasks/s) · ratio ${(one / three).toFixed(2)}x (ideal 3x)`,
  );

  // 2. Per-task overhead: a remote no-op task against the same task run here, interleaved.
  const worker = startWorker(workerClones[0], "overhead", PARALLEL);
  await worker.ready();
  run(submitter, ["run", "--on", url, "--agent", "noop", "warm-up"]);
  const local = [];
  const remoteRuns = [];
  for (let i = 0; i < RUNS; i++) {
    let t = performance.now();
    const l = run(submitter, ["run", "--on", "local", "--json", "--agent", "noop", `local ${i}`]);
    if (l.status !== 0) throw new Error(`local run: ${l.stderr}`);
    local.push((performance.now() - t) / 1000);
    t = performance.now();
    const r = run(submitter, ["run", "--on", url, "--json", "--agent", "noop", `remote ${i}`]);
    if (r.status !== 0) throw new Error(`remote run: ${r.stderr}`);
    remoteRuns.push((performance.now() - t) / 1000);
  }
  const [ml, mr] = [median(local), median(remoteRuns)];
  console.log(
    `overhead    caesar run (no-op agent), median of ${RUNS}: local ${ml.toFixed(2)} s · --on nats ${mr.toFixed(2)} s · ratio ${(mr / ml).toFixed(2)}x (+${(mr - ml).toFixed(2)} s per task)`,
  );
  await stopWorker(worker);

  // 3. Memory per running task, on one worker taking CONCURRENT tasks at once.
  const big = startWorker(workerClones[1], "memory", CONCURRENT);
  await big.ready();
  run(submitter, ["run", "--on", url, "--agent", "noop", "warm-up"]);
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const idle = await sampledRss(big.child.pid);
  const held = await submitMany(CONCURRENT, "holder", "hold");
  await waitFor(() => held.every((id) => stateOf(id).phase === "running"), `${CONCURRENT} tasks running`);
  const busy = await sampledRss(big.child.pid);
  const perTask = (busy - idle) / CONCURRENT;
  // A local task of the same agent, for comparison: the peak of the project's conductor service, which
  // conducts every local task (as a worker does the cluster's).
  run(submitter, ["run", "--on", "local", "--json", "--agent", "noop", "one local"]);
  const commonDir = execFileSync("git", ["rev-parse", "--path-format=absolute", "--git-common-dir"], {
    cwd: submitter,
    encoding: "utf8",
  }).trim();
  const service = JSON.parse(readFileSync(join(commonDir, "caesar", "service", "service.json"), "utf8"));
  const serviceKiB = Number(
    /^VmHWM:\s+(\d+)/m.exec(readFileSync(`/proc/${service.pid}/status`, "utf8"))?.[1],
  );
  console.log(
    `memory      worker idle ${(idle / MiB).toFixed(1)} MiB · with ${CONCURRENT} tasks running ${(busy / MiB).toFixed(1)} MiB · ${(perTask / MiB).toFixed(2)} MiB per running task (target <= 15) · this project's local conductor service: ${(serviceKiB / 1024).toFixed(1)} MiB at its peak`,
  );
  // 4. Cancel: from the request recorded here to the agent's process gone on the worker.
  const latencies = [];
  for (const id of held.slice(0, 5)) {
    const local = JSON.parse(
      readFileSync(join(workerClones[1], ".caesar", "tasks", id, "state.json"), "utf8"),
    );
    const pid = local.agent_process.pid;
    const cancelling = spawn(process.execPath, [caesar, "cancel", id], { cwd: submitter, stdio: "ignore" });
    await waitFor(() => !existsSync(`/proc/${pid}`), `agent ${pid} to end`, 60_000);
    const gone = Date.now();
    await new Promise((resolve) => cancelling.once("exit", resolve));
    latencies.push(gone - Date.parse(stateOf(id).cancel_requested.at));
  }
  console.log(
    `cancel      request recorded here → agent's process group gone on the worker, median of ${latencies.length}: ${median(latencies)} ms (all: ${latencies.join(", ")} ms)`,
  );
  for (const id of held.slice(5)) run(submitter, ["cancel", id]);
  await stopWorker(big);
} finally {
  for (const child of children.reverse()) if (child.exitCode === null) child.kill("SIGTERM");
  // The submitter's relay exits once idle; stop it now so nothing outlives the benchmark.
  const owner = join(submitter, ".caesar", "state", "relay.lock.owner");
  if (existsSync(owner)) {
    try {
      process.kill(JSON.parse(readFileSync(owner, "utf8")).pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
}
