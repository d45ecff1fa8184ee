import { parseDuration } from "../support/duration.js";

/** How long a service with nothing to do stays (`caesar service run --idle`, CAESAR_SERVICE_IDLE). */
export const DEFAULT_SERVICE_IDLE = "60s";

/**
 * Run the project's conductor service in this process until it exits, then end the process. The one way a
 * service runs: `caesar service run` in the foreground, and the service's own entry (cli/service-main.ts)
 * that front ends start detached. The service itself is loaded here, not by the commands that name this
 * module for its default.
 */
export async function serveProject(root: string, idle: string | undefined): Promise<never> {
  const idleMs = parseDuration(idle ?? process.env.CAESAR_SERVICE_IDLE ?? DEFAULT_SERVICE_IDLE, "--idle");
  const { runService } = await import("../engine/service/service.js");
  const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);
  // One task's stray failure is logged, never the end of the service that conducts all of them.
  process.on("unhandledRejection", (reason) =>
    log(
      `[service] unhandled: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`,
    ),
  );
  const outcome = await runService(root, {
    idleMs,
    log,
    onSignal: (listen) => {
      for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, listen);
      process.on("SIGHUP", () => {});
    },
  });
  if (outcome === "already_running") log(`[service] another service conducts the tasks of ${root}`);
  // Its agents do not need this process: what may still hold the event loop is done.
  process.exit(0);
}
