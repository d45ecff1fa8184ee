import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { TASK_TOKEN_ENV } from "../../protocol/task-dir.js";
import { CaesarError, messageOf } from "../../support/errors.js";
import { PACKAGE_ROOT, SERVICE_MAIN } from "../../support/package-paths.js";
import { PACKAGE_VERSION } from "../../support/package-version.js";
import { isProcessAlive } from "../../support/process.js";
import {
  MAX_SERVICE_LINE,
  readServiceInfo,
  type ServiceInfo,
  type ServiceRequest,
  type ServiceResponse,
  ServiceResponseSchema,
  servicePaths,
} from "./service-files.js";

/** caesar's version and build (a rebuilt dist/ is another build): a service of another build hands over. */
export const BUILD_ID = (() => {
  try {
    return `${PACKAGE_VERSION}+${readFileSync(join(PACKAGE_ROOT, "dist", "build-stamp"), "utf8").trim()}`;
  } catch {
    return `${PACKAGE_VERSION}+dev`;
  }
})();

/** How long a front end waits for a service it started to answer (a loaded machine can take many seconds to start Node). */
const START_TIMEOUT_MS = 60_000;

/**
 * The project's conductor service, started if none runs (detached: no front end owns it). Two front ends
 * starting one at once end with one: the service takes its lock first, and the one that loses exits. A
 * service of another build (caesar was upgraded or rebuilt) is asked to hand over first — it exits at once,
 * leaving its agents running, and this build's service takes them over.
 */
export async function ensureService(root: string): Promise<ServiceInfo> {
  let info = readServiceInfo(root);
  if (info && info.build !== BUILD_ID) {
    await askAt(info, { op: "stop", now: true }, 5_000).catch(() => undefined);
    await waitGone(info, 10_000);
    info = undefined;
  }
  if (info) return info;
  let started = startService(root);
  let starts = 1;
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (let pause = 5; Date.now() < deadline; pause = Math.min(100, pause * 2)) {
    const current = readServiceInfo(root);
    if (current && (await answers(current))) return current;
    // The one started died before this front end heard it answer (it may already have taken a task, and
    // been killed doing it): with no live service recorded, another is started — a few times at most.
    if (!current && started !== undefined && !isProcessAlive({ pid: started }) && starts < MAX_STARTS) {
      started = startService(root);
      starts += 1;
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
  const log = servicePaths(root).log;
  throw new CaesarError("service_unavailable", `The conductor service of ${root} did not start.`, {
    detail: `Its log says why: ${log}. The tasks already created stay queued; any caesar command starts the service again.`,
  });
}

/** Send one request to the project's service (started first if none runs). */
export async function askService(
  root: string,
  request: ServiceRequest,
  timeoutMs = 30_000,
): Promise<ServiceResponse> {
  const info = await ensureService(root);
  return askAt(info, request, timeoutMs);
}

/** Send one request to the service that runs now, if one does (never starts one). */
export async function askRunningService(
  root: string,
  request: ServiceRequest,
  timeoutMs = 30_000,
): Promise<ServiceResponse | undefined> {
  const info = readServiceInfo(root);
  return info ? askAt(info, request, timeoutMs).catch(() => undefined) : undefined;
}

/** How many services a front end starts in a row when each dies before it answers. */
const MAX_STARTS = 3;

/**
 * Start a service for the project, detached, its output in its log; whether it wins its lock is its
 * business. Returns its pid.
 */
export function startService(root: string): number | undefined {
  const paths = servicePaths(root);
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  const log = openSync(paths.log, "a", 0o600);
  try {
    const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, SERVICE_MAIN, "--root", root], {
      cwd: root,
      detached: true,
      stdio: ["ignore", log, log],
      env: serviceEnvironment(),
    });
    child.unref();
    child.on("error", () => {});
    return child.pid;
  } finally {
    closeSync(log);
  }
}

/**
 * The service's V8 flags, on its command line (a process that stays; measured with bench/run.mjs):
 * - a young generation of at most 1 MiB per semi-space (V8 lets it grow to 16): the service keeps little
 *   of what it allocates, and a young generation grown once — loading its code, a task's first steps —
 *   stayed resident for its whole life, about 10 MiB;
 * - no optimising compiler (TurboFan): its first job alone cost about 4 MiB, for code that waits on
 *   processes and files; a flood of output is read in chunks (agent-output.ts), and its CPU was the same.
 * Fixed here, never read from the environment: a front end may run with an agent's environment, and the
 * service runs outside every sandbox.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=1", "--no-opt"];

/**
 * The service's own environment: the front end's that started it, without a task's credentials (a nested
 * front end's). Each task's agent gets the environment its own front end recorded (task-env.ts).
 */
function serviceEnvironment(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env[TASK_TOKEN_ENV];
  delete env.CAESAR_TASK_ID;
  return env;
}

async function answers(info: ServiceInfo): Promise<boolean> {
  try {
    const response = await askAt(info, { op: "status" }, 2_000);
    return response.ok;
  } catch {
    return false;
  }
}

async function waitGone(info: ServiceInfo, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (isProcessAlive(info) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50));
}

/** One request, one response, over the service's socket. */
export function askAt(
  info: ServiceInfo,
  request: ServiceRequest,
  timeoutMs: number,
): Promise<ServiceResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(info.socket);
    let text = "";
    const fail = (error: Error) => {
      socket.destroy();
      reject(error);
    };
    const timer = setTimeout(
      () => fail(new Error(`the conductor service (pid ${info.pid}) did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.setEncoding("utf8");
    socket.on("error", (error) => {
      clearTimeout(timer);
      fail(error);
    });
    socket.on("connect", () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on("data", (chunk: string) => {
      text += chunk;
      if (text.length > MAX_SERVICE_LINE)
        return fail(new Error("the conductor service's answer is too long"));
      const end = text.indexOf("\n");
      if (end === -1) return;
      clearTimeout(timer);
      socket.end();
      try {
        resolve(ServiceResponseSchema.parse(JSON.parse(text.slice(0, end))));
      } catch (error) {
        reject(new Error(`the conductor service answered something unreadable: ${messageOf(error)}`));
      }
    });
    socket.on("close", () => {
      clearTimeout(timer);
      if (!text.includes("\n"))
        reject(new Error(`the conductor service (pid ${info.pid}) closed the connection`));
    });
  });
}
