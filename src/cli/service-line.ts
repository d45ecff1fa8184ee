import type { ServiceStatus } from "../engine/conductor/service-files.js";
import { formatElapsed } from "../ui/elapsed.js";

/** The project's conductor service in one line, for `ps`, `doctor` and `service status`. */
export function describeService(status: ServiceStatus | null): string {
  if (!status) return "not running (the next task starts it)";
  const tasks = status.tasks.length;
  const up = formatElapsed(Date.now() - Date.parse(status.started_at));
  return `pid ${status.pid}, up ${up}, ${tasks} task${tasks === 1 ? "" : "s"}, ${status.slots.used} of ${status.slots.max} slots taken${status.stopping ? ", stopping" : ""}`;
}

/** The service's status, asked over its socket; null when none runs (never starts one). */
export async function readServiceStatus(root: string): Promise<ServiceStatus | null> {
  const { askRunningService } = await import("../engine/conductor/service-client.js");
  const response = await askRunningService(root, { op: "status" }, 5_000);
  return response?.ok ? (response.status ?? null) : null;
}
