#!/usr/bin/env node
// bench/run-overhead: what `caesar run` (worktree isolation, a no-op conformant agent) costs over running
// the same agent directly. Prints medians and the ratio, measured in the same run, plus peak memory of
// caesar's two processes (the front end and the detached conductor).
//
//   npm run build && node bench/run-overhead.mjs [runs=15]
//
// Also measured in the same run: the floor any design of this shape pays (two Node start-ups one after the
// other, and `git worktree add` of the same repository). Targets: caesar's overhead <= 2x that floor, and
// peak memory per process <= a bare Node's + 15 MiB.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const runs = Number(process.argv[2] ?? 15);
// The executable users run.
const caesar = fileURLToPath(new URL("../bin/caesar.js", import.meta.url));
// Everything the benchmark makes lives in one directory, removed at the end.
const scratch = mkdtempSync(join(tmpdir(), "caesar-bench-"));
const root = join(scratch, "repo");
mkdirSync(root);
const agent = join(root, "noop-agent.sh");
writeFileSync(
  agent,
  '#!/bin/sh\nprintf \'{"protocol":"caesar.report/v1","status":"success","summary":"noop"}\' > "$CAESAR_REPORT_PATH"\n',
  { mode: 0o755 },
);
const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: "b",
  GIT_AUTHOR_EMAIL: "b@b",
  GIT_COMMITTER_NAME: "b",
  GIT_COMMITTER_EMAIL: "b@b",
};
execFileSync("git", ["init", "-q", root]);
for (let i = 0; i < 200; i++) writeFileSync(join(root, `file-${i}.txt`), `content ${i}\n`);
writeFileSync(join(root, ".gitignore"), ".caesar/tasks/\n.caesar/wt/\n.caesar/state/\nnoop-agent.sh\n");
execFileSync("git", ["add", "."], { cwd: root });
execFileSync("git", ["commit", "-qm", "init"], { cwd: root, env: gitEnv });
mkdirSync(join(root, ".caesar"), { recursive: true });
writeFileSync(
  join(root, ".caesar", "config.toml"),
  `[policy]\nmax_parallel = 8\n[[agent]]\nid = "noop"\nbin = "${agent}"\n`,
);

// Peak RSS of a child process, from the kernel (ru_maxrss of the reaped child), in KiB.
function timed(command, args, options = {}) {
  const probe = spawnSync(
    "python3",
    [
      "-c",
      "import resource,subprocess,sys,time\nt=time.perf_counter()\nr=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL).returncode\nprint(time.perf_counter()-t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r)",
      command,
      ...args,
    ],
    { encoding: "utf8", ...options },
  );
  const [seconds, rss, code] = probe.stdout.trim().split(/\s+/).map(Number);
  if (code !== 0) throw new Error(`${command} ${args.join(" ")} failed: ${probe.stderr}`);
  return { seconds, rssKiB: rss };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

// The configurations, interleaved run by run so that a noisy machine affects them alike.
const directRun = () => {
  const dir = mkdtempSync(join(scratch, "direct-"));
  const env = {
    ...process.env,
    CAESAR_TASK_FILE: join(dir, "task.json"),
    CAESAR_REPORT_PATH: join(dir, "report.json"),
  };
  return timed(agent, [], { cwd: root, env });
};
const caesarRun = (i) =>
  timed(caesar, ["run", "--json", "--agent", "noop", `noop ${i}`], { cwd: root, env: process.env });
// What any design must pay that has a Node front end start a detached Node conductor, which makes a
// worktree: two Node start-ups one after the other, and `git worktree add` of this repository.
const floorRun = (i) => {
  const node = timed(process.execPath, ["-e", "0"]).seconds;
  const path = join(root, ".caesar", "bench-wt", String(i));
  const worktree = timed("git", ["worktree", "add", "-q", "-b", `bench-floor-${i}`, path, "HEAD"], {
    cwd: root,
  }).seconds;
  return { seconds: 2 * node + worktree, node, worktree };
};

const results = { direct: [], caesar: [], floor: [], node: [], worktree: [] };
let frontRss = 0;
for (let i = 0; i < runs; i++) {
  results.direct.push(directRun().seconds);
  const run = caesarRun(i);
  results.caesar.push(run.seconds);
  frontRss = Math.max(frontRss, run.rssKiB);
  const floor = floorRun(i);
  results.floor.push(floor.seconds);
  results.node.push(floor.node);
  results.worktree.push(floor.worktree);
}
// Each conductor prints its peak memory into its task's conductor.log.
let conductorRss = 0;
for (const id of readdirSync(join(root, ".caesar", "tasks"))) {
  const log = readFileSync(join(root, ".caesar", "tasks", id, "conductor.log"), "utf8");
  const match = /max RSS (\d+) KiB/.exec(log);
  if (match) conductorRss = Math.max(conductorRss, Number(match[1]));
}

// Node itself, for scale: caesar's two processes are Node processes.
let bareNodeRss = 0;
for (let i = 0; i < 3; i++) bareNodeRss = Math.max(bareNodeRss, timed(process.execPath, ["-e", "0"]).rssKiB);

const base = median(results.direct);
const ms = (seconds) => `${(seconds * 1000).toFixed(0)} ms`.padStart(7);
const mib = (kib) => `${(kib / 1024).toFixed(1)} MiB`;
const overhead = median(results.caesar) - base;
const floor = median(results.floor);
console.log(`runs: ${runs} (repository of 200 files, worktree isolation, a no-op agent)`);
console.log(`agent alone:        ${ms(base)}`);
console.log(`caesar run:         ${ms(median(results.caesar))}  overhead ${ms(overhead).trim()}`);
console.log(
  `floor:              ${ms(floor)}  (2 x node start ${ms(median(results.node)).trim()}, git worktree add ${ms(median(results.worktree)).trim()})`,
);
console.log(`overhead / floor:   ${(overhead / floor).toFixed(2)}x   (target <= 2.00x)`);
console.log(
  `peak memory:        front end ${mib(frontRss)}, conductor ${mib(conductorRss)}; bare \`node -e 0\` ${mib(bareNodeRss)} (target <= ${mib(bareNodeRss + 15 * 1024)})`,
);
// Conductors may still be exiting: give them a moment before removing their project.
await new Promise((resolve) => setTimeout(resolve, 500));
rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
