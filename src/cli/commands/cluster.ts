import { type Command, Option } from "commander";
import type { ClusterStatus, WorkerView } from "../../cluster/status.js";
import { formatElapsed } from "../../ui/elapsed.js";
import { type Column, renderTable } from "../../ui/table.js";
import { detectTerminal } from "../../ui/terminal.js";
import { makeTheme } from "../../ui/theme.js";
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

function renderClusterStatus(status: ClusterStatus): string {
  const capabilities = detectTerminal(process.stdout);
  const theme = makeTheme(capabilities);
  const width = capabilities.isTTY ? (capabilities.width ?? 80) : Number.POSITIVE_INFINITY;
  const lines = [
    `NATS ${status.servers} (server ${status.server_version}) · this repository's queue: ${status.queue}`,
    "",
  ];
  if (!status.ready) {
    lines.push(
      "No queue and no worker yet: no caesar worker or submitter has used this server.",
      "Start a worker in a clone of the shared remote: caesar worker --on <nats-url>",
    );
    return lines.join("\n");
  }
  if (status.workers.length === 0)
    lines.push("No worker. Start one in a clone: caesar worker --on <nats-url>");
  else {
    const columns: Column[] = [
      { header: "WORKER" },
      { header: "HOST" },
      { header: "AGENTS", flex: true },
      { header: "LOAD", align: "right" },
      { header: "HEARTBEAT", align: "right" },
      { header: "STATE" },
      { header: "QUEUE" },
    ];
    const rows = status.workers.map((w) => [
      w.id,
      w.host,
      w.agents.join(","),
      `${w.running.length}/${w.max_parallel}`,
      `${formatElapsed(w.age_ms)} ago`,
      {
        text: conditionText(w),
        role: w.condition === "lost" || w.condition === "quarantined" ? ("fail" as const) : undefined,
      },
      w.queue === status.queue ? "this" : w.queue,
    ]);
    lines.push(...renderTable(columns, rows, { theme, width, frame: capabilities.isTTY }));
    for (const w of status.workers.filter((view) => view.quarantined))
      lines.push(`  ${w.id} quarantined itself: ${w.quarantined!.reason}`);
  }
  lines.push("");
  if (status.queue_depth.length === 0) lines.push("Queue: empty.");
  else {
    const columns: Column[] = [
      { header: "AGENT" },
      { header: "WAITING", align: "right" },
      { header: "RUNNING", align: "right" },
      { header: "SERVED" },
    ];
    const rows = status.queue_depth.map((d) => [
      d.agent,
      String(d.waiting),
      String(d.running),
      d.served ? "yes" : "no worker yet",
    ]);
    lines.push(...renderTable(columns, rows, { theme, width, frame: capabilities.isTTY }));
  }
  const busy = Object.entries(status.tasks_per_worker).filter(([, ids]) => ids.length > 0);
  if (busy.length > 0) {
    lines.push("", "Tasks per worker:");
    for (const [worker, ids] of busy) {
      const lost = status.workers.find((w) => w.id === worker)?.condition === "lost";
      lines.push(`  ${worker}: ${ids.join(", ")}${lost ? " (worker lost: to be run again elsewhere)" : ""}`);
    }
  }
  if (status.tasks.length > 0) {
    lines.push("", "Tasks in flight, and ended in the last hour (attempts across workers):");
    for (const task of status.tasks) {
      const where =
        task.state === "finished"
          ? (task.outcome ?? "finished")
          : task.state === "released"
            ? "back in the queue"
            : "running";
      lines.push(`  ${task.id}  ${where}`);
      for (const attempt of task.attempts) {
        const reason = attempt.reason ? `: ${clip(attempt.reason, 100)}` : "";
        const span = `${attempt.started_at}${attempt.ended_at ? ` → ${attempt.ended_at}` : ""}`;
        lines.push(
          `    ${attempt.attempt}  ${attempt.worker}  ${span}  ${attempt.outcome.replace(/_/g, " ")}${reason}`,
        );
      }
    }
  }
  if (status.dropped.length > 0) {
    lines.push("", "Messages dropped or refused by workers (latest first; kept 7 days):");
    for (const d of status.dropped) {
      lines.push(
        `  seq ${d.seq}  ${d.at}  ${d.worker}  ${d.action}${d.task_id ? ` ${d.task_id}` : ""}  ${d.subject}: ${clip(d.reason, 160)}`,
      );
    }
  }
  return lines.join("\n");
}

function clip(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ");
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function conditionText(worker: WorkerView): string {
  if (worker.condition === "lost") return "lost (no heartbeat)";
  return worker.condition;
}
