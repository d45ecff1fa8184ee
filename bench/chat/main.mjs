#!/usr/bin/env node
// bench/chat: caesar's agent-chat against the reference implementation (chat.py), measured in the same
// run, on demand (`npm run bench:chat`); it asserts nothing (the machines are shared and noisy).
//
//   npm run bench:chat -- [--writers 6] [--posts 50] [--in-process 1600] [--rounds 2] [--cpu-rounds 15]
//                         [--latency-rounds 10] [--interval-ms 2000] [--only cli,inproc,anatomy,latency]
//
// 1. CLI throughput: <writers> concurrent writers, each running <posts> `post` commands one after the
//    other, each command a new process with its output piped (as an agent's shell tool runs it):
//    `caesar chat post` (bin/caesar, the command npm installs) against `python3 chat.py post`. Rounds in
//    ABBA order.
// 2. In-process throughput: one process posting <in-process> messages in a loop, caesar's postMessage
//    against chat.py's cmd_post (the reference's own code, imported), interpreter start excluded; then
//    <writers> such processes at once on one channel, sharing <in-process> posts (starts included).
// 3. Where the time goes: CPU per process (Node's and Python's own start, caesar chat's code, a whole
//    post), and the parts of one post (lock, listing, write, fsync, link, the folder's fsync).
// 4. Wake-up latency of `wait`: the file watch against sleep-polling.
// The reference is found as in the tests (AGENT_CHAT_REFERENCE, else ../shared/reference/agent-chat/).
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { initChannel, makeChatContext, postMessage } from "../../dist/chat/index.js";
import { findReference } from "./reference.mjs";
import { median, ms, now, p90, rate, ratio, sleep, us } from "./stats.mjs";

const HERE = fileURLToPath(new URL(".", import.meta.url));
// The command users and agents run: the shell launcher npm links, which starts bin/caesar.js.
const CAESAR = fileURLToPath(new URL("../../bin/caesar", import.meta.url));
const CAESAR_JS = fileURLToPath(new URL("../../bin/caesar.js", import.meta.url));
const FULL_CLI = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const index = args.indexOf(name);
  return index === -1 ? fallback : args[index + 1];
};
const writers = Number(option("--writers", "6"));
const postsEach = Number(option("--posts", "50"));
const inProcess = Number(option("--in-process", "1600"));
const rounds = Number(option("--rounds", "2"));
const cpuRounds = Number(option("--cpu-rounds", "15"));
const latencyRounds = Number(option("--latency-rounds", "10"));
const intervalMs = Number(option("--interval-ms", "2000"));
const only = new Set(option("--only", "cli,inproc,anatomy,latency").split(","));

const ref = findReference();
const scratch = mkdtempSync(join(tmpdir(), "caesar-bench-chat-"));
let channels = 0;
const freshChannel = () => `c${++channels}`;

async function main() {
  console.log(
    `caesar chat benchmark: node ${process.version}, ${availableParallelism()} cpus (${cpus()[0]?.model}), ${scratch}`,
  );
  if ("missing" in ref) console.log(`reference: ${ref.missing} — only caesar is measured`);
  else console.log(`reference: ${ref.script}\n  run by ${ref.python} (Python ${ref.version})`);
  console.log(
    `NODE_EXTRA_CA_CERTS is ${process.env.NODE_EXTRA_CA_CERTS ? "set" : "not set"} in this environment`,
  );
  const ctx = makeChatContext({ root: scratch, env: {} });
  if (only.has("cli")) await cliThroughput();
  if (only.has("inproc")) await inProcessThroughput();
  if (only.has("anatomy")) await whereTheTimeGoes(ctx);
  if (only.has("latency")) await wakeUpLatency(ctx);
}

// --- 1. CLI throughput ----------------------------------------------------------------------------

const caesarTool = {
  name: "caesar chat",
  init: (channel) => [CAESAR, ["chat", "init", channel, "--root", scratch]],
  post: (channel, from, title) => [
    CAESAR,
    ["chat", "post", channel, "--root", scratch, "--from", from, "--title", title, "--body", `${title}\n`],
  ],
};
const referenceTool = () => ({
  name: "chat.py",
  init: (channel) => [ref.python, [ref.script, "--root", scratch, "init", channel]],
  post: (channel, from, title) => [
    ref.python,
    [
      ref.script,
      "--root",
      scratch,
      "post",
      channel,
      "--from",
      from,
      "--title",
      title,
      "--body",
      `${title}\n`,
    ],
  ],
});

async function cliThroughput() {
  // Node 20 parses NODE_EXTRA_CA_CERTS's file as it starts (≈ 40 ms a process), Python does not, and
  // bin/caesar leaves it out for `caesar chat`. Where it is set, both tools are also measured without it,
  // as on a machine that does not set it.
  const environments = [["this environment", process.env]];
  if (process.env.NODE_EXTRA_CA_CERTS) {
    const clean = { ...process.env };
    delete clean.NODE_EXTRA_CA_CERTS;
    environments.push(["without NODE_EXTRA_CA_CERTS", clean]);
  }
  for (const [label, env] of environments) {
    const tools = "missing" in ref ? [caesarTool] : [referenceTool(), caesarTool];
    const order = tools.length === 1 ? tools : [tools[0], tools[1], tools[1], tools[0]];
    const rates = new Map(tools.map((tool) => [tool.name, []]));
    for (let round = 0; round < rounds; round++) {
      for (const tool of order) {
        const channel = freshChannel();
        await run(...tool.init(channel), env);
        const started = now();
        await Promise.all(
          Array.from({ length: writers }, async (_, writer) => {
            for (let index = 1; index <= postsEach; index++)
              await run(...tool.post(channel, `writer-${writer}`, `post ${index}`), env);
          }),
        );
        const seconds = (now() - started) / 1000;
        checkSequences(channel, writers * postsEach, tool.name);
        rates.get(tool.name).push((writers * postsEach) / seconds);
      }
    }
    console.log(
      `\n1. CLI, ${label}: ${writers} writers × ${postsEach} posts, one process per post (posts/s, median of ${rates.get(caesarTool.name).length})`,
    );
    report(rates);
  }
}

// --- 2. In-process throughput ---------------------------------------------------------------------

async function inProcessThroughput() {
  const rates = new Map([["caesar chat", []]]);
  if (!("missing" in ref)) rates.set("chat.py", []);
  for (let round = 0; round < rounds; round++) {
    const order = rates.size === 1 ? ["caesar chat"] : ["chat.py", "caesar chat", "caesar chat", "chat.py"];
    for (const name of order) {
      const channel = freshChannel();
      await initChannel(makeChatContext({ root: scratch, env: {} }), channel);
      const output =
        name === "chat.py"
          ? await run(ref.python, [
              join(HERE, "reference-posts.py"),
              ref.dir,
              scratch,
              channel,
              String(inProcess),
            ])
          : await run(process.execPath, [
              join(HERE, "worker.mjs"),
              "posts",
              scratch,
              channel,
              String(inProcess),
            ]);
      checkSequences(channel, inProcess, name);
      rates.get(name).push(inProcess / JSON.parse(output).seconds);
    }
  }
  console.log(
    `\n2. In-process: one process posting ${inProcess} messages (posts/s, median of ${rates.get("caesar chat").length})`,
  );
  report(rates);
  await concurrentInProcess();
}

// The same loops, <writers> processes at once on one channel: what the lock's hold time costs them.
async function concurrentInProcess() {
  const each = Math.max(1, Math.round(inProcess / writers));
  const rates = new Map([["caesar chat", []]]);
  if (!("missing" in ref)) rates.set("chat.py", []);
  for (let round = 0; round < rounds; round++) {
    const order = rates.size === 1 ? ["caesar chat"] : ["chat.py", "caesar chat", "caesar chat", "chat.py"];
    for (const name of order) {
      const channel = freshChannel();
      await initChannel(makeChatContext({ root: scratch, env: {} }), channel);
      const started = now();
      await Promise.all(
        Array.from({ length: writers }, () =>
          name === "chat.py"
            ? run(ref.python, [join(HERE, "reference-posts.py"), ref.dir, scratch, channel, String(each)])
            : run(process.execPath, [join(HERE, "worker.mjs"), "posts", scratch, channel, String(each)]),
        ),
      );
      const seconds = (now() - started) / 1000;
      checkSequences(channel, writers * each, name);
      rates.get(name).push((writers * each) / seconds);
    }
  }
  console.log(
    `\n2b. In-process, ${writers} processes at once × ${each} posts each, one channel (posts/s, process starts included, median of ${rates.get("caesar chat").length})`,
  );
  report(rates);
}

// --- 3. Where the time goes -----------------------------------------------------------------------

async function whereTheTimeGoes(ctx) {
  const channel = freshChannel();
  await initChannel(ctx, channel);
  const empty = join(scratch, "empty.cjs");
  writeFileSync(empty, "");
  const withoutCerts = { ...process.env };
  delete withoutCerts.NODE_EXTRA_CA_CERTS;
  const post = ["post", channel, "--root", scratch, "--from", "bench", "--title", "t", "--body", "b"];
  const commands = [
    { label: "node, empty script (this environment)", argv: [process.execPath, empty] },
    {
      label: "node, empty script, no NODE_EXTRA_CA_CERTS",
      argv: [process.execPath, empty],
      env: withoutCerts,
    },
    { label: "caesar chat --version (start + caesar's code)", argv: [CAESAR, "chat", "--version"] },
    { label: "caesar chat post", argv: [CAESAR, "chat", ...post] },
    { label: "caesar chat post, bin/caesar.js run by node", argv: [CAESAR_JS, "chat", ...post] },
    {
      label: "caesar chat post through the full CLI bundle",
      argv: [process.execPath, FULL_CLI, "chat", ...post],
    },
  ];
  if (!("missing" in ref)) {
    commands.push({ label: "python, empty script", argv: [ref.python, "-c", "pass"] });
    commands.push({
      label: "chat.py post",
      argv: [
        ref.python,
        ref.script,
        "--root",
        scratch,
        "post",
        channel,
        "--from",
        "bench",
        "--title",
        "t",
        "--body",
        "b",
      ],
    });
  }
  const measured = JSON.parse(
    await run(process.env.BENCH_PYTHON ?? ("missing" in ref ? "python3" : ref.python), [
      join(HERE, "cpu.py"),
      JSON.stringify(commands.map(({ argv, env }) => ({ argv, ...(env ? { env } : {}) }))),
      String(cpuRounds),
    ]),
  );
  console.log(
    `\n3. Where the time goes\n   CPU per process, stdout piped (median of ${cpuRounds}; wall in brackets):`,
  );
  commands.forEach((command, index) => {
    const { cpu, wall } = measured[index];
    console.log(`   ${command.label.padEnd(48)} ${ms(median(cpu)).padStart(9)}  [${ms(median(wall))}]`);
  });

  // The parts of one in-process post, alone, in a channel that already holds <inProcess> messages.
  for (let index = 1; index <= Math.min(inProcess, 1600); index++)
    await postMessage(ctx, channel, { from: "bench", title: `fill ${index}`, body: "fill\n" });
  const parts = JSON.parse(
    await run(process.execPath, [join(HERE, "worker.mjs"), "anatomy", scratch, channel, "400"]),
  );
  console.log(
    `   the parts of one post, in a channel of ${Math.min(inProcess, 1600)} messages (median of 400):`,
  );
  console.log(`     lock (mkdir + rmdir _seq.lock)         ${us(parts.lock)}`);
  console.log(
    `     caesar's lock (take, check, release)   ${us(parts.caesarLock)}   (mkdir, its holder's record, rmdir)`,
  );
  console.log(`     listing (readdir, for max(seq)+1)      ${us(parts.listing)}`);
  console.log(`     write a temp file, no fsync            ${us(parts.write)}`);
  console.log(
    `     write a temp file + fsync              ${us(parts.fsync)}   (fsync: ${us(parts.fsync - parts.write)})`,
  );
  console.log(`     link to its name + unlink the temp     ${us(parts.link)}`);
  console.log(`     link + fsync of the folder             ${us(parts.folder)}`);
  console.log(
    "   under the lock a caesar post lists, writes + fsyncs, links and removes the lock; the folder's fsync\n   comes after the release (chat.py lists and writes under the lock, without any fsync).",
  );
}

// --- 4. Wake-up latency ---------------------------------------------------------------------------

async function wakeUpLatency(ctx) {
  const watch = await latency(ctx, "watch");
  const poll = await latency(ctx, "poll");
  console.log("\n4. wait wake-up latency, post start (one process) -> message in hand (another process)");
  console.log(`   file watch:           median ${ms(median(watch))}, p90 ${ms(p90(watch))}`);
  console.log(
    `   polling every ${intervalMs} ms: median ${ms(median(poll))}, p90 ${ms(p90(poll))} (baseline)`,
  );
  console.log(`   the watch wakes ${ratio(median(poll), median(watch))} faster than polling (median)`);
}

async function latency(ctx, mode) {
  const channel = freshChannel();
  await initChannel(ctx, channel);
  const waiter = spawn(
    process.execPath,
    [join(HERE, "worker.mjs"), "wait", scratch, channel, mode, String(latencyRounds), String(intervalMs)],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const lines = createInterface({ input: waiter.stdout })[Symbol.asyncIterator]();
  const samples = [];
  for (let round = 0; round < latencyRounds; round++) {
    await lines.next(); // "waiting"
    // Let the waiter settle into its wait, then land at a random point of the polling period.
    await sleep(100 + Math.random() * intervalMs);
    const started = now();
    await postMessage(ctx, channel, { from: "bench", to: ["waiter"], title: `round ${round}` });
    samples.push(JSON.parse((await lines.next()).value).woke - started);
  }
  await new Promise((resolve) => waiter.on("close", resolve));
  return samples;
}

// --- helpers --------------------------------------------------------------------------------------

function report(rates) {
  const caesar = median(rates.get("caesar chat"));
  const reference = rates.has("chat.py") ? median(rates.get("chat.py")) : undefined;
  if (reference !== undefined) console.log(`   chat.py      ${rate(reference)} posts/s (baseline)`);
  console.log(
    `   caesar chat  ${rate(caesar)} posts/s${reference === undefined ? "" : `, ${ratio(caesar, reference)} the reference`}`,
  );
}

/** Every sequence 1..count exactly once: a benchmark that lost or duplicated posts would measure nothing. */
function checkSequences(channel, count, tool) {
  const seqs = readdirSync(join(scratch, channel))
    .filter((name) => /^\d+-.*\.md$/.test(name))
    .map((name) => Number(name.split("-")[0]))
    .sort((a, b) => a - b);
  const expected = Array.from({ length: count }, (_, index) => index + 1);
  if (seqs.length !== count || seqs.some((seq, index) => seq !== expected[index]))
    console.log(`   !! ${tool}: ${seqs.length} messages for ${count} posts, sequences not 1..${count}`);
}

/** Run a process to its end, output piped; resolves with its stdout. */
function run(command, argv, env = process.env) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { stdio: ["ignore", "pipe", "pipe"], env });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0
        ? resolve(stdout)
        : reject(new Error(`${command} ${argv.join(" ")} exited ${code}: ${stderr}`)),
    );
  });
}

try {
  await main();
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
