import { join } from "node:path";
import { isProcessAlive } from "../../support/process.js";
import { readServiceInfo, socketFolderFor } from "./service-files.js";
import { isWorkerOf } from "./worker-record.js";

/**
 * The variable the conductor service (or a cluster worker) sets on a command it starts for a sandboxed
 * task's broker: the task the request came from. Believed only in a process whose parent is the project's
 * live service or a live worker of the clone — which start such a process for nothing else — so no agent
 * can set it for itself (docs/threat-model.md).
 */
export const BROKER_CALLER_ENV = "CAESAR_BROKER_CALLER";

/** Where a sandboxed agent finds its broker's socket (inside its sandbox, at the same path as outside). */
export const BROKER_ENV = "CAESAR_BROKER";

/**
 * The task a brokered command runs for, when this process is one: its parent is the project's conductor
 * service (its recorded pid and start time) or a cluster worker of the clone (worker-record.ts), which
 * named the task. Undefined otherwise.
 */
export function brokeredCaller(root: string, env: NodeJS.ProcessEnv): string | undefined {
  const named = env[BROKER_CALLER_ENV];
  if (!named) return undefined;
  const service = readServiceInfo(root);
  if (service && service.pid === process.ppid && isProcessAlive(service)) return named;
  return isWorkerOf(root, process.ppid) ? named : undefined;
}

/**
 * Where a task's broker listens: a folder of its own in the control directory (or, when that path is too
 * long for a socket, one in /tmp/caesar-<uid> named after it). Removed with the task's end (conductor.ts).
 */
export function brokerSocketOf(controlTaskDir: string): string {
  return join(socketFolderFor(join(controlTaskDir, "broker"), "b.sock"), "b.sock");
}
