// Child processes of bench/chat (each measurement runs in a fresh process, like an agent's):
//   posts <root> <channel> <count>                      caesar's postMessage <count> times; prints {"seconds"}
//                                                       (several of these at once: concurrent posters)
//   anatomy <root> <channel> <count>                    the parts of a post, timed alone; prints µs per part
//   wait <root> <channel> <mode> <rounds> <intervalMs>  a waiter for the wake-up latency
import {
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmdirSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { acquireSeqLock, makeChatContext, postMessage, waitForMessages } from "../../dist/chat/index.js";
import { now } from "./stats.mjs";

const [kind, root, channel, ...rest] = process.argv.slice(2);
const ctx = makeChatContext({ root, env: {} });

if (kind === "posts") {
  const count = Number(rest[0]);
  const started = performance.now();
  for (let index = 1; index <= count; index++)
    await postMessage(ctx, channel, {
      from: "bench",
      title: `post ${index}`,
      body: `body of post ${index}\n`,
    });
  process.stdout.write(`${JSON.stringify({ seconds: (performance.now() - started) / 1000 })}\n`);
} else if (kind === "anatomy") {
  // Each step of a post on its own, in a channel of <count> messages, repeated: what a post spends.
  const dir = join(root, channel);
  const count = Number(rest[0]);
  const text = `---\nseq: 1\nfrom: bench\nto: all\nchannel: ${channel}\nts: 2026-07-17T14:03:22+07:00\nstatus: discussion\ntitle: post\n---\nbody of post\n`;
  const timeEach = (step) => {
    const samples = [];
    for (let index = 0; index < count; index++) {
      const started = performance.now();
      step(index);
      samples.push(performance.now() - started);
    }
    samples.sort((a, b) => a - b);
    return samples[Math.floor(samples.length / 2)];
  };
  // caesar's whole lock as a post takes it: take (mkdir + its holder's record), check, release.
  const held = [];
  for (let index = 0; index < count; index++) {
    const started = performance.now();
    const lock = await acquireSeqLock(dir, { staleMs: ctx.lockStaleMs });
    lock.stillHeld();
    lock.release();
    held.push(performance.now() - started);
  }
  held.sort((a, b) => a - b);
  const result = {
    lock: timeEach(() => {
      mkdirSync(join(dir, "_bench.lock"));
      rmdirSync(join(dir, "_bench.lock"));
    }),
    caesarLock: held[Math.floor(held.length / 2)],
    listing: timeEach(() => readdirSync(dir)),
    write: timeEach((index) => {
      const fd = openSync(join(dir, `.bench-${index}.tmp`), "wx");
      writeSync(fd, text);
      closeSync(fd);
    }),
    fsync: timeEach((index) => {
      const fd = openSync(join(dir, `.bench-sync-${index}.tmp`), "wx");
      writeSync(fd, text);
      fsyncSync(fd);
      closeSync(fd);
    }),
    link: timeEach((index) => {
      linkSync(join(dir, `.bench-${index}.tmp`), join(dir, `.bench-link-${index}.tmp`));
      unlinkSync(join(dir, `.bench-${index}.tmp`));
    }),
    // The folder's flush after a new name in it, as a post does once it has released the lock.
    folder: timeEach((index) => {
      linkSync(join(dir, `.bench-sync-${index}.tmp`), join(dir, `.bench-named-${index}.tmp`));
      const fd = openSync(dir, "r");
      fsyncSync(fd);
      closeSync(fd);
    }),
  };
  for (const name of readdirSync(dir)) if (name.startsWith(".bench-")) unlinkSync(join(dir, name));
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else if (kind === "wait") {
  const [mode, rounds, intervalMs] = rest;
  for (let round = 0; round < Number(rounds); round++) {
    process.stdout.write("waiting\n");
    const result = await waitForMessages(ctx, channel, {
      as: "waiter",
      timeoutMs: 60_000,
      intervalMs: Number(intervalMs),
      poll: mode === "poll",
    });
    process.stdout.write(`${JSON.stringify({ woke: now(), timed_out: result.timed_out })}\n`);
  }
}
