import type { Command } from "commander";
import type { ServiceStatus } from "../../engine/conductor/service-files.js";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";
import { describeService, readServiceStatus } from "../service-line.js";
import { DEFAULT_SERVICE_IDLE } from "../service-run.js";

export const serviceCommand: CommandDefinition = {
  name: "service",
  group: "follow",
  define(program: Command) {
    const service = program
      .command("service")
      .description(
        "the project's conductor service, which conducts its local tasks: `caesar service status`",
      );
    withCommonOptions(
      service
        .command("status")
        .description("whether the service runs: its pid, uptime and the tasks it conducts"),
    ).action(
      handle(async (ctx) => {
        const status = await readServiceStatus(ctx.root);
        ctx.out.result({ running: status !== null, service: status }, () => renderServiceStatus(status));
        return 0;
      }),
    );
    withCommonOptions(
      service
        .command("stop")
        .description("stop the service after its tasks end (new tasks start a new one)")
        .option("--now", "stop at once: its agents keep running, and the next service takes them over"),
    ).action(
      handle(async (ctx) => {
        const { askRunningService, ensureService } = await import("../../engine/conductor/service-client.js");
        const { isProcessAlive } = await import("../../support/process.js");
        const now = ctx.options.now === true;
        const response = await askRunningService(ctx.root, { op: "stop", now }, 5_000);
        const status = response?.ok ? response.status : undefined;
        if (!status) {
          ctx.out.result({ stopped: false, running: false }, "No conductor service runs for this project.");
          return 0;
        }
        const waiting = status.tasks.length;
        if (!now && waiting > 0) ctx.out.notice(`waiting for its ${waiting} task(s) to end…`);
        while (isProcessAlive(status.pid)) await new Promise((resolve) => setTimeout(resolve, 100));
        // Its tasks are not left alone: a new service takes them over at once.
        if (now && waiting > 0) await ensureService(ctx.root);
        ctx.out.result(
          { stopped: true, pid: status.pid, handed_over: now ? status.tasks.map((task) => task.id) : [] },
          now && waiting > 0
            ? `Service ${status.pid} stopped; a new service took over its ${waiting} task(s).`
            : `Service ${status.pid} stopped.`,
        );
        return 0;
      }),
    );
    // Started by front ends, detached (engine/conductor/service-client.ts); runs in the foreground here.
    withCommonOptions(
      service
        .command("run")
        .description("run the service in the foreground (front ends start it by themselves)")
        .option(
          "--idle <duration>",
          `exit after this long with nothing to do (default ${DEFAULT_SERVICE_IDLE})`,
        ),
    ).action(
      handle(async (ctx) => {
        const { serveProject } = await import("../service-run.js");
        await serveProject(ctx.root, ctx.options.idle === undefined ? undefined : String(ctx.options.idle));
      }),
    );
    return service;
  },
};

function renderServiceStatus(status: ServiceStatus | null): string {
  const lines = [`service   ${describeService(status)}`];
  for (const task of status?.tasks ?? []) lines.push(`  ${task.id}  ${task.phase}`);
  const spans = status?.telemetry;
  if (spans)
    lines.push(
      `traces    ${spans.exported} span(s) exported, ${spans.dropped} dropped${spans.last_error ? ` (last export error: ${spans.last_error})` : ""}`,
    );
  return lines.join("\n");
}
