import type { Command } from "commander";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";

export const logsCommand: CommandDefinition = {
  name: "logs",
  group: "follow",
  define(program: Command) {
    return withCommonOptions(
      program
        .command("logs")
        .description("a task's events (or its raw output), optionally following it live")
        .argument("<id>", "task id (or a unique prefix)")
        .option("--raw", "the agent's raw output (raw.log) instead of events")
        .option("--follow", "keep following until the task finishes"),
    ).action(
      handle(async (ctx, id) => {
        const { loadLiveTask } = await import("../../engine/lifecycle/live-task.js");
        const record = await loadLiveTask(ctx.root, String(id), "logs");
        if (ctx.options.raw)
          return streamRaw(record.paths.raw, record.dir, ctx.options.follow === true, record.state.phase);
        const { readEvents, describeRejectedLine } = await import("../../engine/store/event-log.js");
        const { followTask } = await import("../../engine/follow/follow.js");
        const { createRunRenderer } = await import("../../ui/run-renderer.js");
        const renderer = createRunRenderer({ out: process.stdout, taskId: record.id });
        const show = (event: Parameters<typeof renderer.event>[0]) =>
          ctx.json ? ctx.out.ndjson(event) : renderer.event(event);
        // A line that is not an event this caesar reads (an unknown protocol version above all) is said,
        // on stderr, never skipped in silence; stdout stays the events (NDJSON under --json).
        const rejected = (line: Parameters<typeof describeRejectedLine>[0]) =>
          process.stderr.write(`caesar: ${record.paths.events} ${describeRejectedLine(line)}\n`);
        if (ctx.options.follow) {
          const stop = new AbortController();
          process.once("SIGINT", () => stop.abort());
          await followTask(record.id, record.dir, { onEvent: show, onRejected: rejected }, stop.signal);
          return 0;
        }
        const read = await readEvents(record.paths.events);
        // Read after the events, the task's record names caesar's `finished` among them (event-owner.ts).
        const { readState } = await import("../../engine/store/task-store.js");
        const { markFinishedEvents } = await import("../../engine/store/event-owner.js");
        const state = await readState(record.dir).catch(() => record.state);
        for (const event of markFinishedEvents(read.events, state)) show(event);
        for (const line of read.rejected) rejected(line);
        return 0;
      }),
    );
  },
};

async function streamRaw(path: string, dir: string, follow: boolean, phase: string): Promise<number> {
  let offset = 0;
  const { openTaskFileOrNothing } = await import("../../engine/store/task-files.js");
  // raw.log through the one opener of task files: a link or a FIFO the agent left there is not followed.
  const pump = async () => {
    const handle = await openTaskFileOrNothing(path, "read", { maxBytes: Number.MAX_SAFE_INTEGER }).catch(
      () => undefined,
    );
    if (!handle) return;
    await new Promise<void>((resolve) => {
      const stream = handle.createReadStream({ start: offset });
      stream.on("data", (chunk) => {
        offset += chunk.length;
        process.stdout.write(chunk);
      });
      stream.on("error", () => resolve());
      stream.on("end", () => resolve());
    });
  };
  await pump();
  if (!follow || phase === "finished") return 0;
  const { readState } = await import("../../engine/store/task-store.js");
  const { waitForChange } = await import("../../engine/store/change-watch.js");
  const stop = new AbortController();
  process.once("SIGINT", () => stop.abort());
  while (!stop.signal.aborted) {
    await waitForChange(dir, 1000, stop.signal);
    await pump();
    if ((await readState(dir)).phase === "finished") {
      await pump();
      break;
    }
  }
  return 0;
}
