import { type Command, Option } from "commander";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";

export const clusterCommand: CommandDefinition = {
  name: "cluster",
  group: "follow",
  define(program: Command) {
    const cluster = program
      .command("cluster")
      .description("the pool of workers behind a NATS server: `caesar cluster status`");
    withCommonOptions(
      cluster
        .command("status")
        .description("workers (agents, capacity, load, last heartbeat), queue depth, tasks per worker")
        .option("--on <nats-url>", "the NATS server(s) (default: [cluster] nats)")
        .addOption(new Option("--nats <url>", "the former spelling of --on").hideHelp())
        .option("--creds <file>", "a NATS credentials file (default: [cluster] credentials)"),
    ).action(
      handle(async (ctx) => {
        const { loadConfig } = await import("../../config/effective.js");
        const { clusterAccessFrom } = await import("../../cluster/access.js");
        const { connectCluster } = await import("../../cluster/connection.js");
        const { queueNameOf } = await import("../../cluster/names.js");
        const { readClusterStatus } = await import("../../cluster/status.js");
        const { gitOut } = await import("../../workspace/git.js");
        const config = await loadConfig(ctx.root);
        const access = clusterAccessFrom(
          ctx.options as { on?: string; nats?: string; creds?: string },
          config,
          ctx.root,
          ctx.cwd,
          "caesar cluster status",
        );
        const head = await gitOut(ctx.root, ["rev-parse", "HEAD"]).catch(() => "");
        const queue = head ? await queueNameOf(ctx.root, head, access.queue) : (access.queue ?? "");
        const connection = await connectCluster(access, "caesar cluster status");
        try {
          const status = await readClusterStatus(connection, queue);
          const { renderClusterStatus } = await import("../cluster-render.js");
          ctx.out.result(status, () => renderClusterStatus(status));
        } finally {
          await connection.close();
        }
      }),
    );
    for (const pin of [true, false]) {
      withCommonOptions(
        cluster
          .command(pin ? "pin" : "unpin")
          .description(
            pin
              ? "keep a remote task's result on the git remote past [cluster] keep_results"
              : "let a pinned result be pruned again after [cluster] keep_results",
          )
          .argument("<id>", "task id (or a unique prefix)"),
      ).action(
        handle(async (ctx, id) => {
          const { pinResult } = await import("../../cluster/pin.js");
          const pinned = await pinResult(ctx.root, String(id), pin);
          ctx.out.result(pinned, () =>
            pin
              ? `Pinned: ${pinned.ref} on ${pinned.remote} keeps the result of ${pinned.id} (${pinned.commit.slice(0, 12)}).`
              : `Unpinned: the result of ${pinned.id} is pruned once older than [cluster] keep_results.`,
          );
        }),
      );
    }
    // Internal: the relay of a project's remote tasks, started by front ends (docs/cluster.md).
    cluster
      .command("relay", { hidden: true })
      .option("--root <dir>", "the project")
      .action(
        handle(async (ctx) => {
          const { runRelay } = await import("../../cluster/relay/relay.js");
          const stop = new AbortController();
          process.once("SIGTERM", () => stop.abort());
          process.once("SIGINT", () => stop.abort());
          await runRelay(ctx.root, { signal: stop.signal });
          // A connection to a server that is gone may still hold the event loop: the relay is done.
          process.exit(0);
        }),
      );
    return cluster;
  },
};
