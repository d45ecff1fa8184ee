#!/usr/bin/env node
// bench/run: what `caesar run` and the conductor service cost a task, measured in one run against baselines measured in
// the same run.
//
//   npm run bench:run -- [--runs 11] [--parallel 20] [--flood-mb 100] [--baseline <bin>]... [--sandbox]
//
// 1. `caesar run` with a warm service (a no-op agent, worktree isolation, 200 files) against its floor —
//    one bare Node start plus `git worktree add` of the same repository — and the agent run directly.
// 2. Memory: caesar's summed peak for one attached task (the front end, the service, the agent's keeper),
//    and per running task with `--parallel` tasks at once (the service's RSS growth divided by their number).
// 3. A flood: an agent printing `--flood-mb` MB on stdout, against a plain copy of the same bytes to a file,
//    and against a no-op run of the same build (what the flood itself costs); the service's peak memory.
// With `--baseline <path to another caesar's bin/caesar.js>` (an older build: one conductor process per
// task), the same measurements of it, run interleaved with this build's; given again, of each (a change
// judged against the build it replaces and against an older one, in one run). This build runs without the OS
// sandbox (`[sandbox] mode = "off"`), as older builds did; with `--sandbox`, again with every agent in it
// (`[sandbox] mode = "required"`: bubblewrap, the egress proxy).
import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "11" },
    parallel: { type: "string", default: "20" },
    "flood-mb": { type: "string", default: "100" },
    baseline: { type: "string", multiple: true },
    sandbox: { type: "boolean", default: false },
  },
});
const runs = Number(values.runs);
const parallel = Number(values.parallel);
const floodMb = Number(values["flood-mb"]);
// This build without the OS sandbox (its default is to sandbox where one can run), so that it is judged
// against older builds on the same work; `--sandbox` adds it sandboxed. Baselines keep their defaults.
const builds = [
  { name: "this build", bin: fileURLToPath(new URL("../bin/caesar.js", import.meta.url)), sandbox: "off" },
];
for (const [index, bin] of (values.baseline ?? []).entries())
  builds.push({ name: index === 0 ? "baseline" : `baseline ${index + 1}`, bin });
if ((values.baseline ?? []).length > 1)
  for (const build of builds.slice(1)) console.log(`${build.name}: ${build.bin}`);
if (values.sandbox) builds.push({ name: "sandboxed", bin: builds[0].bin, sandbox: "required" });

const scratch = mkdtempSync(join(tmpdir(), "caesar-bench-service-"));
const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: "b",
  GIT_AUTHOR_EMAIL: "b@b",
  GIT_COMMITTER_NAME: "b",
  GIT_COMMITTER_EMAIL: "b@b",
};
const bigFile = join(scratch, "flood.txt");
{
  const line = `${"x".repeat(99)}\n`;
  const chunk = line.repeat(10_000); // 1 MB
  writeFileSync(bigFile, "");
  for (let i = 0; i < floodMb; i++) writeFileSync(bigFile, chunk, { flag: "a" });
}

/** A repository of 200 files with three agents: no-op, a sleeper, and the flood. */
function makeProject(name, sandbox, extra = { agents: {}, config: "" }) {
  const root = join(scratch, name);
  mkdirSync(root);
  const agents = {
    ...extra.agents,
    noop: '#!/bin/sh\nprintf \'{"protocol":"caesar.report/v1","status":"success","summary":"noop"}\' > "$CAESAR_REPORT_PATH"\n',
    sleeper:
      '#!/bin/sh\nsleep 4\nprintf \'{"protocol":"caesar.report/v1","status":"success","summary":"slept"}\' > "$CAESAR_REPORT_PATH"\n',
    // Beside the script (a link to the one file): the sandbox's /tmp is its own, the agent's folder stays visible.
    flood: `#!/bin/sh\ncat "$(dirname "$0")/flood.txt"\nprintf '{"protocol":"caesar.report/v1","status":"success","summary":"flooded"}' > "$CAESAR_REPORT_PATH"\n`,
  };
  const agentDir = join(scratch, `${name}-agents`);
  mkdirSync(agentDir);
  linkSync(bigFile, join(agentDir, "flood.txt"));
  for (const [id, script] of Object.entries(agents))
    writeFileSync(join(agentDir, `${id}.sh`), script, { mode: 0o755 });
  execFileSync("git", ["init", "-q", root]);
  for (let i = 0; i < 200; i++) writeFileSync(join(root, `file-${i}.txt`), `content ${i}\n`);
  writeFileSync(join(root, ".gitignore"), ".caesar/tasks/\n.caesar/wt/\n.caesar/state/\n");
  execFileSync("git", ["add", "."], { cwd: root });
  execFileSync("git", ["commit", "-qm", "init"], { cwd: root, env: gitEnv });
  mkdirSync(join(root, ".caesar"), { recursive: true });
  const config = Object.keys(agents)
    .map((id) => `[[agent]]\nid = "${id}"\nbin = "${join(agentDir, `${id}.sh`)}"\n`)
    .join("\n");
  const sandboxed = sandbox ? `[sandbox]\nmode = "${sandbox}"\n` : "";
  writeFileSync(
    join(root, ".caesar", "config.toml"),
    `[policy]\nmax_parallel = ${parallel + 4}\n${sandboxed}${extra.config}${config}`,
  );
  return root;
}

/** Wall time and peak RSS (KiB) of a command, from the kernel (ru_maxrss of the reaped child). */
function timed(command, args, options = {}) {
  const probe = spawnSync(
    "python3",
    [
      "-c",
      "import resource,subprocess,sys,time\nt=time.perf_counter()\nr=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL).returncode\nu=resource.getrusage(resource.RUSAGE_CHILDREN)\nprint(time.perf_counter()-t, u.ru_maxrss, u.ru_utime+u.ru_stime, r)",
      command,
      ...args,
    ],
    { encoding: "utf8", ...options },
  );
  const [seconds, rss, cpu, code] = probe.stdout.trim().split(/\s+/).map(Number);
  if (code !== 0) throw new Error(`${command} ${args.join(" ")} failed (${code}): ${probe.stderr}`);
  return { seconds, rssKiB: rss, cpu };
}

/** The conductor service of a project (this build), if one runs. */
function servicePid(root) {
  try {
    return JSON.parse(readFileSync(join(root, ".git", "caesar", "service", "service.json"), "utf8")).pid;
  } catch {
    return undefined;
  }
}

/** VmRSS, VmHWM (KiB) and CPU seconds of a process, from /proc. */
function processStats(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0);
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return { rss: field("VmRSS"), hwm: field("VmHWM"), cpu: ticks / 100 };
  } catch {
    return undefined;
  }
}

/** Each per-task conductor of an older build prints its peak memory into its task's conductor.log. */
function conductorPeaks(root) {
  const peaks = [];
  const tasks = join(root, ".caesar", "tasks");
  if (!existsSync(tasks)) return peaks;
  for (const id of readdirSync(tasks)) {
    const log = join(tasks, id, "conductor.log");
    const match = existsSync(log) ? /max RSS (\d+) KiB, CPU (\d+) ms/.exec(readFileSync(log, "utf8")) : null;
    if (match) peaks.push({ id, rss: Number(match[1]), cpu: Number(match[2]) / 1000 });
  }
  return peaks;
}

const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
const ms = (seconds) => `${(seconds * 1000).toFixed(0)} ms`;
const mib = (kib) => `${(kib / 1024).toFixed(1)} MiB`;

// 1. Overhead, interleaved run by run so that a noisy machine affects every configuration alike.
for (const build of builds) build.root = makeProject(build.name.replace(/\W/g, "-"), build.sandbox);
for (const build of builds)
  timed(build.bin, ["run", "--json", "--agent", "noop", "warm up"], { cwd: build.root });
const overhead = { direct: [], floor: [], node: [], worktree: [] };
for (const build of builds) build.times = [];
const floorRoot = makeProject("floor");
for (let i = 0; i < runs; i++) {
  const dir = mkdtempSync(join(scratch, "direct-"));
  overhead.direct.push(
    timed(join(scratch, "floor-agents", "noop.sh"), [], {
      cwd: floorRoot,
      env: { ...process.env, CAESAR_REPORT_PATH: join(dir, "report.json") },
    }).seconds,
  );
  for (const build of builds) {
    const run = timed(build.bin, ["run", "--json", "--agent", "noop", `noop ${i}`], { cwd: build.root });
    build.times.push(run.seconds);
    build.frontRss = Math.max(build.frontRss ?? 0, run.rssKiB);
  }
  const node = timed(process.execPath, ["-e", "0"]).seconds;
  const path = join(floorRoot, ".caesar", "bench-wt", String(i));
  const worktree = timed("git", ["worktree", "add", "-q", "-b", `bench-floor-${i}`, path, "HEAD"], {
    cwd: floorRoot,
  }).seconds;
  overhead.floor.push(node + worktree);
  overhead.node.push(node);
  overhead.worktree.push(worktree);
}
const direct = median(overhead.direct);
const floor = median(overhead.floor);
let bareNode = 0;
for (let i = 0; i < 3; i++) bareNode = Math.max(bareNode, timed(process.execPath, ["-e", "0"]).rssKiB);
console.log(`== caesar run, ${runs} runs (200 files, worktree isolation, a no-op agent; the service warm)`);
console.log(`agent alone          ${ms(direct)}`);
console.log(
  `floor                ${ms(floor)}  (node start ${ms(median(overhead.node))}, git worktree add ${ms(median(overhead.worktree))})`,
);
for (const build of builds) {
  const cost = median(build.times) - direct;
  console.log(
    `${build.name.padEnd(20)} ${ms(median(build.times))}  overhead ${ms(cost)} = ${(cost / floor).toFixed(2)}x the floor`,
  );
}
console.log(`(target for this build: <= 1.50x)`);

// 2. Memory for one attached task, and per task with many running at once.
console.log(`\n== memory (bare \`node -e 0\`: ${mib(bareNode)})`);
for (const build of builds) {
  const pid = servicePid(build.root);
  const service = pid ? processStats(pid) : undefined;
  if (service) {
    // The service's peak so far covers the runs above, one task at a time; the keeper is a shell (~1 MiB).
    const sum = build.frontRss + service.hwm + 1024;
    console.log(
      `${build.name.padEnd(20)} one task: front end ${mib(build.frontRss)} + service ${mib(service.hwm)} + keeper ~1 MiB = ${mib(sum)}  (target <= 81.7 MiB, the peer's one process)`,
    );
  } else {
    const peaks = conductorPeaks(build.root);
    const conductor = median(peaks.map((peak) => peak.rss));
    console.log(
      `${build.name.padEnd(20)} one task: front end ${mib(build.frontRss)} + conductor ${mib(conductor)} = ${mib(build.frontRss + conductor)}`,
    );
  }
}

async function runParallel(build) {
  const root = makeProject(`${build.name.replace(/\W/g, "-")}-parallel`, build.sandbox);
  timed(build.bin, ["run", "--json", "--agent", "noop", "warm up"], { cwd: root });
  const pid = servicePid(root);
  const idle = pid ? processStats(pid)?.rss : undefined;
  const started = [];
  for (let i = 0; i < parallel; i++)
    started.push(
      new Promise((resolve, reject) => {
        const child = spawn(build.bin, ["run", "--json", "--detach", "--agent", "sleeper", `sleep ${i}`], {
          cwd: root,
          stdio: "ignore",
        });
        child.on("exit", (code) =>
          code === 0 ? resolve() : reject(new Error(`run --detach exited ${code}`)),
        );
      }),
    );
  await Promise.all(started);
  let peak = 0;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (pid) peak = Math.max(peak, processStats(pid)?.rss ?? 0);
    const states = readdirSync(join(root, ".caesar", "tasks")).map((id) => {
      try {
        return JSON.parse(readFileSync(join(root, ".caesar", "tasks", id, "state.json"), "utf8")).phase;
      } catch {
        return "unreadable";
      }
    });
    if (states.every((phase) => phase === "finished") || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (pid && idle !== undefined) {
    console.log(
      `${build.name.padEnd(20)} ${parallel} tasks at once: the service grew ${mib(peak - idle)} (from ${mib(idle)} to ${mib(peak)}): ${mib((peak - idle) / parallel)} per task  (target <= 5 MiB)`,
    );
  } else {
    const peaks = conductorPeaks(root).filter((peak) => peak.id !== undefined);
    const sum = peaks.reduce((total, peak) => total + peak.rss, 0);
    console.log(
      `${build.name.padEnd(20)} ${parallel} tasks at once: ${peaks.length} conductors, ${mib(sum)} in all: ${mib(sum / Math.max(1, peaks.length))} per task`,
    );
  }
}
for (const build of builds) await runParallel(build);

// 3. A flood of output: `--runs` floods per build (at most 5), each beside a no-op run of the same build, so that
// what the flood itself costs — its wall time beyond a no-op task's — is seen apart from `caesar run`'s own.
console.log(`\n== a flood: ${floodMb} MB on stdout`);
const copyTarget = join(scratch, "copy.txt");
const copies = [];
const floodRuns = Math.max(1, Math.min(runs, 5));
for (const build of builds) {
  build.floodRoot = makeProject(`${build.name.replace(/\W/g, "-")}-flood`, build.sandbox);
  timed(build.bin, ["run", "--json", "--agent", "noop", "warm up"], { cwd: build.floodRoot });
  build.pid = servicePid(build.floodRoot);
  build.before = build.pid ? processStats(build.pid) : undefined;
  Object.assign(build, { floods: [], noops: [], floodCpu: [], floodFront: 0 });
}
const loads = [];
for (let i = 0; i < floodRuns; i++) {
  copies.push(timed("sh", ["-c", `cat "${bigFile}" > "${copyTarget}"`]).seconds);
  loads.push(loadavg()[0]);
  for (const build of builds) {
    const root = build.floodRoot;
    build.noops.push(
      timed(build.bin, ["run", "--json", "--agent", "noop", `noop ${i}`], { cwd: root }).seconds,
    );
    const before = build.pid ? processStats(build.pid) : undefined;
    const run = timed(build.bin, ["run", "--json", "--agent", "flood", "flood"], { cwd: root });
    const after = build.pid ? processStats(build.pid) : undefined;
    build.floods.push(run.seconds);
    build.floodFront = Math.max(build.floodFront, run.rssKiB);
    build.floodCpu.push(run.cpu + (before && after ? after.cpu - before.cpu : 0));
  }
}
const copy = median(copies);
console.log(
  `plain copy to a file  ${ms(copy)}  (load average during the floods: ${loads.map((load) => load.toFixed(2)).join(", ")})`,
);
for (const build of builds) {
  const root = build.floodRoot;
  const ids = readdirSync(join(root, ".caesar", "tasks")).filter((task) => {
    const state = JSON.parse(readFileSync(join(root, ".caesar", "tasks", task, "state.json"), "utf8"));
    return state.objective === "flood";
  });
  const raw = readFileSync(join(root, ".caesar", "tasks", ids[0], "raw.log")).length;
  let memory;
  let cpu = median(build.floodCpu);
  const after = build.pid ? processStats(build.pid) : undefined;
  if (build.before && after) {
    memory = `service peak ${mib(after.hwm)} (before the floods ${mib(build.before.rss)})`;
  } else {
    const peaks = conductorPeaks(root).filter((peak) => ids.includes(peak.id));
    memory = `conductor peak ${mib(Math.max(0, ...peaks.map((peak) => peak.rss)))}`;
    cpu += median(peaks.map((peak) => peak.cpu));
  }
  const flood = median(build.floods);
  const beyond = flood - median(build.noops);
  console.log(
    `${build.name.padEnd(20)} ${ms(flood)} = ${(flood / copy).toFixed(2)}x the copy  (target <= 3x); beyond a no-op run (${ms(median(build.noops))}): ${ms(beyond)} = ${(beyond / copy).toFixed(2)}x the copy; CPU ${cpu.toFixed(2)} s; ${memory}; front end ${mib(build.floodFront)}; raw.log ${(raw / 1e6).toFixed(1)} MB`,
  );
}

// 4. With --sandbox: what a command and a network request cost inside the sandbox, once it runs — an agent
// running many short commands, and one making many requests to a server on the host's loopback (allowed:
// through the relay and the egress proxy) — against the same agents unsandboxed, each beyond a no-op run.
if (values.sandbox) {
  const COMMANDS = 200;
  const GITS = 20;
  const REQUESTS = 100;
  // A process of its own: `timed` waits synchronously, and a server of this one would not answer meanwhile.
  const server = spawn(
    process.execPath,
    [
      "-e",
      'const s = require("node:http").createServer((q, r) => r.end("ok")); s.listen(0, "127.0.0.1", () => console.log(s.address().port));',
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const port = await new Promise((resolve) =>
    server.stdout.once("data", (chunk) => resolve(Number(String(chunk).trim()))),
  );
  const done = `printf '{"protocol":"caesar.report/v1","status":"success","summary":"done"}' > "$CAESAR_REPORT_PATH"\n`;
  const extra = {
    agents: {
      commands: `#!/bin/sh\ni=0; while [ $i -lt ${COMMANDS} ]; do /bin/true; i=$((i+1)); done\ni=0; while [ $i -lt ${GITS} ]; do git status --porcelain >/dev/null; i=$((i+1)); done\n${done}`,
      requests: `#!/bin/sh\n${JSON.stringify(process.execPath)} -e 'const http = require("node:http"); let left = ${REQUESTS}; const next = () => left-- === 0 ? process.exit(0) : http.get("http://127.0.0.1:${port}/", (res) => { res.resume(); res.on("end", next); }).on("error", (e) => { console.error(e.message); process.exit(1); }); next();'\n${done}`,
    },
    config: `allow_hosts = ["127.0.0.1:${port}"]\n`,
  };
  const plain = builds[0];
  const boxed = builds.find((build) => build.name === "sandboxed");
  const measured = [plain, boxed].map((build) => {
    // allow_hosts goes under the [sandbox] both builds name (mode "off", "required").
    const root = makeProject(`${build.name.replace(/\W/g, "-")}-per-command`, build.sandbox, extra);
    timed(build.bin, ["run", "--json", "--agent", "noop", "warm up"], { cwd: root });
    return { build, root, noop: [], commands: [], requests: [] };
  });
  for (let i = 0; i < Math.max(1, Math.min(runs, 5)); i++)
    for (const entry of measured) {
      const run = (agent, network = []) =>
        timed(entry.build.bin, ["run", "--json", ...network, "--agent", agent, `${agent} ${i}`], {
          cwd: entry.root,
        }).seconds;
      entry.noop.push(run("noop"));
      entry.commands.push(run("commands"));
      entry.requests.push(run("requests", ["--network", "on"]));
    }
  server.kill();
  console.log(
    `\n== in the sandbox, once it runs: ${COMMANDS} × /bin/true and ${GITS} × git status; ${REQUESTS} HTTP requests to the host's loopback`,
  );
  const beyond = (entry, key) => median(entry[key]) - median(entry.noop);
  for (const entry of measured)
    console.log(
      `${entry.build.name.padEnd(20)} commands ${ms(beyond(entry, "commands"))}, requests ${ms(beyond(entry, "requests"))} beyond a no-op run (${ms(median(entry.noop))})`,
    );
  const [off, on] = measured;
  console.log(
    `the sandbox's cost: ${(((beyond(on, "commands") - beyond(off, "commands")) / (COMMANDS + GITS)) * 1000).toFixed(2)} ms per command, ${(((beyond(on, "requests") - beyond(off, "requests")) / REQUESTS) * 1000).toFixed(2)} ms per request (through the relay and the egress proxy)`,
  );
}

// Services exit once idle; their projects go now (a service whose project is removed exits at once).
rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
