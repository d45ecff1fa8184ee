import { type Command, Option } from "commander";
import { UsageError } from "../../support/errors.js";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";

export const workerCommand: CommandDefinition = {
  name: "worker",
  group: "delegate",
  define(program: Command) {
    return withCommonOptions(
      program
        .command("worker")
        .description("take tasks from a cluster's queue and run them here (in a clone of the shared remote)")
        .option("--on <nats-url>", "the NATS server(s), nats:// or tls:// (default: [cluster] nats)")
        .addOption(new Option("--nats <url>", "the former spelling of --on").hideHelp())
        .option(
          "--agents <ids>",
          "agents to serve, comma-separated (default: every agent installed and allowed)",
        )
        .option("--max-parallel <n>", "tasks at once (default: [policy] max_parallel)")
        .option("--name <id>", "this worker's name in `caesar cluster status` (default: <host>-<pid>)")
        .option("--creds <file>", "a NATS credentials file (default: [cluster] credentials)")
        .option(
          "--remote <name|url>",
          "the git remote to fetch from and push to (default: [cluster] remote)",
        ),
    ).action(
      handle(async (ctx) => {
        const { loadConfig } = await import("../../config/effective.js");
        const { clusterAccessFrom } = await import("../../cluster/access.js");
        const { runWorker } = await import("../../cluster/worker/worker.js");
        const config = await loadConfig(ctx.root);
        const o = ctx.options as {
          on?: string;
          nats?: string;
          creds?: string;
          remote?: string;
          agents?: string;
          name?: string;
        };
        const access = clusterAccessFrom(o, config, ctx.root, ctx.cwd, "caesar worker");
        const maxParallel = parseCount(ctx.options.maxParallel, config.policy.max_parallel.value);
        const drain = new AbortController();
        const stopNow = new AbortController();
        const onSignal = () => {
          if (!drain.signal.aborted) {
            process.stderr.write(
              "[worker] finishing the tasks it runs, taking no new one (again: stop them now)\n",
            );
            drain.abort();
          } else stopNow.abort();
        };
        process.on("SIGTERM", onSignal);
        process.on("SIGINT", onSignal);
        await runWorker({
          root: ctx.root,
          config,
          access,
          ...(o.agents
            ? {
                agents: o.agents
                  .split(",")
                  .map((id) => id.trim())
                  .filter(Boolean),
              }
            : {}),
          maxParallel,
          ...(o.name ? { name: o.name } : {}),
          gitRemote: access.git_remote,
          queueOverride: access.queue,
          heartbeatMs: access.heartbeat_ms,
          replicas: access.replicas,
          drain: drain.signal,
          stopNow: stopNow.signal,
          log: (line) => process.stderr.write(`${new Date().toISOString()} ${line}\n`),
          onReady: (info) =>
            ctx.json
              ? ctx.out.ndjson({ ready: true, ...info, pid: process.pid })
              : ctx.out.line(
                  `caesar worker ${info.id}: serving ${info.agents.join(", ")} (queue ${info.queue}). Ctrl-C finishes what runs; twice stops now.`,
                ),
        });
        process.off("SIGTERM", onSignal);
        process.off("SIGINT", onSignal);
        // A client still reconnecting to a server that is gone may hold the event loop: the worker is done.
        process.exit(0);
      }),
    );
  },
};

function parseCount(raw: unknown, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(String(raw)) || value < 1) {
    throw new UsageError(
      "invalid_option",
      `--max-parallel ${JSON.stringify(raw)} is not a positive number.`,
      {
        detail: "Pass how many tasks this worker may run at once, e.g. --max-parallel 4.",
      },
    );
  }
  return value;
}
