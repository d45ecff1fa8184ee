import type { ClusterStatus, WorkerView } from "../cluster/status.js";
import { formatElapsed } from "../ui/elapsed.js";
import { type Column, renderTable } from "../ui/table.js";
import { detectTerminal } from "../ui/terminal.js";
import { makeTheme } from "../ui/theme.js";

// `caesar cluster status` for a person: loaded by that command only (its tables measure text, which costs
// every other command's start-up; test/architecture/startup-weight.test.ts).

export function renderClusterStatus(status: ClusterStatus): string {
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
