#!/usr/bin/env node
// bench/run-overhead: what `caesar run` (worktree isolation, a no-op conformant agent) costs over running
// the same agent directly. Prints medians and the ratio, measured in the same run, plus peak memory of
// caesar's two processes (the front end and the detached conductor).
//
//   npm run build && node bench/run-overhead.mjs [runs=15]
//
// Target on a 2-core machine: overhead <= 0.15 s wall, <= 50 MiB per process.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const runs = Number(process.argv[2] ?? 15);
// The launcher users run (a shell script: it starts the CLI from its startup snapshot when it can).
const caesar = fileURLToPath(new URL("../bin/caesar", import.meta.url));
const root = mkdtempSync(join(tmpdir(), "caesar-bench-"));
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

// Baseline: the agent alone, with the two files it needs.
const direct = [];
for (let i = 0; i < runs; i++) {
  const dir = mkdtempSync(join(tmpdir(), "caesar-bench-direct-"));
  const env = {
    ...process.env,
    CAESAR_TASK_FILE: join(dir, "task.json"),
    CAESAR_REPORT_PATH: join(dir, "report.json"),
  };
  direct.push(timed(agent, [], { cwd: root, env }).seconds);
}
const viaCaesar = [];
let frontRss = 0;
for (let i = 0; i < runs; i++) {
  const measured = timed(caesar, ["run", "--json", "--agent", "noop", `noop ${i}`], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  viaCaesar.push(measured.seconds);
  frontRss = Math.max(frontRss, measured.rssKiB);
}
let conductorRss = 0;
for (const id of readdirSync(join(root, ".caesar", "tasks"))) {
  const log = readFileSync(join(root, ".caesar", "tasks", id, "conductor.log"), "utf8");
  const match = /max RSS (\d+) KiB/.exec(log);
  if (match) conductorRss = Math.max(conductorRss, Number(match[1]));
}

// Node itself, for scale: caesar's two processes are Node processes.
let bareNodeRss = 0;
for (let i = 0; i < 3; i++) bareNodeRss = Math.max(bareNodeRss, timed(process.execPath, ["-e", "0"]).rssKiB);

const base = median(direct);
const full = median(viaCaesar);
const mib = (kib) => (kib / 1024).toFixed(1);
console.log(`runs: ${runs} (repository of 200 files, worktree isolation)`);
console.log(`agent alone:     median ${(base * 1000).toFixed(0)} ms`);
console.log(`via caesar run:  median ${(full * 1000).toFixed(0)} ms`);
console.log(
  `overhead:        ${((full - base) * 1000).toFixed(0)} ms  (ratio ${(full / base).toFixed(1)}x)   target <= 150 ms`,
);
console.log(
  `peak memory:     front end ${mib(frontRss)} MiB, conductor ${mib(conductorRss)} MiB   target <= 50 MiB`,
);
console.log(
  `                 (bare \`node -e 0\`: ${mib(bareNodeRss)} MiB; caesar adds ${mib(frontRss - bareNodeRss)} and ${mib(conductorRss - bareNodeRss)} MiB)`,
);
