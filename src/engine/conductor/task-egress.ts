import { join } from "node:path";
import { keyDoorSpecs, keyPlaceholder } from "../../agents/key-masks.js";
import { EgressProxy, type EgressRefusal, portSocket } from "../../sandbox/egress-proxy.js";
import { KeyDoor } from "../../sandbox/key-door.js";
import { MachineProxies } from "../../sandbox/upstream-proxy.js";
import { formatHostRule, parseHostRules } from "../../support/host-rules.js";
import { controlTaskPaths } from "../store/control.js";
import type { EventWriter } from "../store/event-log.js";
import { appendRefusal } from "../store/refusals.js";
import type { TaskPlan } from "../store/task-plan.js";
import type { EgressDoor, KeyDoorInside } from "./sandbox-run.js";
import { socketFolderFor } from "./service-files.js";

/** Distinct refused hosts recorded per task; past that, refusals are only counted in the service's log. */
const RECORDED = 20;

/** Where a task's egress proxy listens (the folder its sandbox binds at /tmp/.caesar-egress). */
export function egressFolderOf(root: string, taskId: string): string {
  return socketFolderFor(join(controlTaskPaths(root, taskId).dir, "egress"), portSocket(65535));
}

/** A sandboxed task's way out, open: what its agent's command needs of it, and how to close it. */
export interface TaskEgress {
  door: EgressDoor;
  close(): void;
}

/** Whose keys a task's doors mask: its agent's product and the environment its agent starts from. */
export interface MaskedKeys {
  product: string;
  env: NodeJS.ProcessEnv;
}

/**
 * A sandboxed task's egress proxy (sandbox/egress-proxy.ts), opened by whoever conducts it — the service or
 * a cluster worker — for as long as it does: in a folder of the task's control directory, which its sandbox
 * alone has bound. Each host it refuses is recorded against the task once: an `error` event and a refusal
 * (a `medium` finding of its report); so is each allowed host the machine's proxy would not open.
 * The machine's proxy it chains (HTTPS_PROXY, NO_PROXY…) is read from this process's environment — the
 * service's or the worker's — never from the task's, which an agent's request may have set.
 * With `[sandbox] mask_keys` (the plan's), its agent's provider keys get a door each (key-door.ts, see
 * agents/key-masks.ts) in the same folder: the agent gets a placeholder, the provider the key.
 */
export async function openEgress(
  root: string,
  taskId: string,
  plan: TaskPlan,
  events: EventWriter,
  log: (line: string) => void,
  masked?: MaskedKeys,
): Promise<TaskEgress | undefined> {
  if (!plan.sandbox.backend || !plan.sandbox.egress) return undefined;
  // Bounded, as the service's memory and log are: the peer is untrusted and may ask for endless names.
  const seen = new Set<string>();
  let unrecorded = 0;
  const onRefused = (refusal: EgressRefusal) => {
    const key = formatHostRule({ host: refusal.host, port: refusal.port });
    if (refusal.upstream) {
      recordUpstream(key, refusal.why);
      return;
    }
    if (seen.has(key)) return;
    if (seen.size >= RECORDED) {
      unrecorded++;
      // Once on record: the agent asked for more than the records keep (its report says so).
      if (unrecorded === 1) {
        const summary = `The agent asked to reach more than ${RECORDED} hosts its task may not; the others are counted in the service's log, not recorded one by one.`;
        void Promise.all([
          events.append({ type: "error", code: "egress_refused", message: summary }),
          appendRefusal(root, taskId, { code: "egress_refused", action: "connect to more hosts", summary }),
        ]).catch(() => undefined);
      }
      // The first one past the records, then every thousandth: a count, not a line per name.
      if (unrecorded === 1 || unrecorded % 1000 === 0)
        log(
          `[egress ${taskId}] ${unrecorded} more refusal(s) not recorded; the latest: ${key.slice(0, 200)}`,
        );
      return;
    }
    seen.add(key);
    const shown = key.length > 260 ? `${key.slice(0, 250)}…${key.slice(-8)}` : key;
    const summary = `The agent asked to reach ${shown}, which its task may not: ${refusal.why}. To allow it, add it to [sandbox] allow_hosts (the task needs the network too).`;
    void Promise.all([
      events.append({ type: "error", code: "egress_refused", message: summary }),
      appendRefusal(root, taskId, { code: "egress_refused", action: `connect ${shown}`, summary }),
    ]).catch(() => undefined);
  };
  // Allowed hosts the machine's proxy did not open: a few on record (its words name no credentials), the
  // rest in the service's log as a count.
  const failed = new Set<string>();
  let uncounted = 0;
  const recordUpstream = (key: string, why: string) => {
    if (failed.has(key)) return;
    if (failed.size >= RECORDED) {
      // The first one past the records, then every thousandth: a count, not a line per request.
      uncounted++;
      if (uncounted === 1 || uncounted % 1000 === 0)
        log(
          `[egress ${taskId}] ${uncounted} more host(s) the machine's proxy did not open, not recorded; the latest: ${key.slice(0, 200)}: ${why.slice(0, 300)}`,
        );
      return;
    }
    failed.add(key);
    const shown = key.length > 260 ? `${key.slice(0, 250)}…${key.slice(-8)}` : key;
    const summary = `The agent asked to reach ${shown}, which its task may, but caesar could not through the machine's proxy: ${why.slice(0, 300)}. See "The sandbox's network" in docs/configuration.md.`;
    void Promise.all([
      events.append({ type: "error", code: "egress_upstream_failed", message: summary }),
      appendRefusal(root, taskId, { code: "egress_upstream_failed", action: `connect ${shown}`, summary }),
    ]).catch(() => undefined);
  };
  const machine = MachineProxies.fromEnvironment(process.env);
  const folder = egressFolderOf(root, taskId);
  const proxy = new EgressProxy(folder, parseHostRules(plan.sandbox.egress), onRefused, {
    upstream: machine,
  });
  const doors: KeyDoor[] = [];
  const keys: KeyDoorInside[] = [];
  const close = () => {
    proxy.close();
    for (const door of doors) door.close();
  };
  try {
    await proxy.listen();
    const specs = plan.sandbox.mask_keys && masked ? keyDoorSpecs(masked.product, masked.env) : [];
    for (const [index, spec] of specs.entries()) {
      const socket = `key-${index}.sock`;
      const placeholders: Record<string, string> = {};
      const secrets = new Map<string, string>();
      for (const variable of spec.keys) {
        const key = masked!.env[variable]!;
        const placeholder = keyPlaceholder(taskId, variable, key);
        placeholders[variable] = placeholder;
        secrets.set(placeholder, key);
      }
      const door = new KeyDoor(join(folder, socket), spec.upstream, secrets, machine);
      doors.push(door);
      await door.listen();
      keys.push({ socket, urlVariable: spec.urlVariable, placeholders, taskId });
    }
  } catch (error) {
    // What had started listening goes with it (the conductor has nothing to close).
    close();
    throw error;
  }
  return { door: { folder, ports: proxy.ports, keys }, close };
}
