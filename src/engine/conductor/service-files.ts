import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, readFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { isValidTaskId } from "../../protocol/ids.js";
import { isProcessAlive } from "../../support/process.js";
import { TelemetryCountersSchema } from "../../support/telemetry/counters.js";
import * as z from "../../support/zod.js";
import { controlPaths } from "../store/control.js";

/**
 * Where a project's conductor service keeps itself, in the control directory: `service/` (0700), with the
 * lock that makes it the only one, `service.json` saying who it is and where it listens, its socket, and
 * its log.
 */
export interface ServicePaths {
  dir: string;
  lock: string;
  info: string;
  log: string;
  /** The socket's preferred place (see socketPathFor). */
  socket: string;
}

export function servicePaths(root: string): ServicePaths {
  const dir = join(controlPaths(root).dir, "service");
  return {
    dir,
    lock: join(dir, "lock"),
    info: join(dir, "service.json"),
    log: join(dir, "service.log"),
    socket: join(dir, "service.sock"),
  };
}

/** A Unix socket's path must fit in sun_path (108 bytes on Linux, 104 on macOS, NUL included). */
const MAX_SOCKET_PATH = 100;

/**
 * Where the service listens: in its own 0700 folder when the path fits a socket address; else in a
 * folder of this user's own (`$XDG_RUNTIME_DIR/caesar`, or `<tmp>/caesar-<uid>`, made 0700 and refused if
 * it is anyone else's or a link), named after the control directory. service.json says which.
 */
export function socketPathFor(paths: ServicePaths): string {
  if (Buffer.byteLength(paths.socket) <= MAX_SOCKET_PATH) return paths.socket;
  return join(privateSocketBase(), `${shortName(paths.dir)}.sock`);
}

/**
 * A folder for sockets named up to `longestName`: `preferred` when they fit in a socket's path, else one in
 * `/tmp/caesar-<uid>` named after `preferred` — the same whichever process asks (a task's broker and egress
 * proxy in a project whose path is long: the service that takes a task over opens them where its agent
 * was told they are).
 */
export function socketFolderFor(preferred: string, longestName: string): string {
  if (Buffer.byteLength(join(preferred, longestName)) <= MAX_SOCKET_PATH) return preferred;
  return join(privateSocketBase("/tmp"), shortName(preferred));
}

/** `$XDG_RUNTIME_DIR/caesar`, else `<tmp>/caesar-<uid>`: made private, refused if someone else's. */
function privateSocketBase(tmp?: string): string {
  const uid = userInfo().uid;
  const base =
    tmp === undefined && process.env.XDG_RUNTIME_DIR
      ? join(process.env.XDG_RUNTIME_DIR, "caesar")
      : join(tmp ?? tmpdir(), `caesar-${uid}`);
  mkdirSync(base, { recursive: true, mode: 0o700 });
  const info = lstatSync(base);
  if (!info.isDirectory() || info.uid !== uid || (info.mode & 0o077) !== 0)
    throw new Error(
      `${base} is not a private directory of this user (mode 0700, owned by uid ${uid}): remove it`,
    );
  return base;
}

function shortName(path: string): string {
  return createHash("sha256").update(path).digest("hex").slice(0, 20);
}

export const ServiceInfoSchema = z.object({
  pid: z.number().int().positive(),
  start: z.string().optional(),
  socket: z.string(),
  /** caesar's version and build: a client of another build asks this one to hand over (service-client.ts). */
  build: z.string(),
  started_at: z.string(),
});
export type ServiceInfo = z.infer<typeof ServiceInfoSchema>;

/** The running service, as its service.json says — when its process is alive. */
export function readServiceInfo(root: string): ServiceInfo | undefined {
  try {
    const parsed = ServiceInfoSchema.safeParse(JSON.parse(readFileSync(servicePaths(root).info, "utf8")));
    return parsed.success && isProcessAlive(parsed.data) ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** A task id, validated before it ever becomes a path. */
const TaskIdSchema = z.string().refine(isValidTaskId, "not a task id");

/** Requests a front end sends the service over its socket, one JSON line each (one per connection). */
export const ServiceRequestSchema = z.discriminatedUnion("op", [
  /** Conduct this task (created in the project's records); answered once the service has claimed it. */
  z.object({ op: z.literal("conduct"), task: TaskIdSchema }),
  /** Stop this task now (its cancel is already recorded in its state). */
  z.object({ op: z.literal("cancel"), task: TaskIdSchema }),
  z.object({ op: z.literal("status") }),
  /** Stop: after its tasks end (taking no new one), or now, leaving its agents to the next service. */
  z.object({ op: z.literal("stop"), now: z.boolean() }),
]);
export type ServiceRequest = z.infer<typeof ServiceRequestSchema>;

export const ServiceTaskSchema = z.object({ id: z.string(), phase: z.string(), since: z.string() });

export const ServiceStatusSchema = z.object({
  pid: z.number().int(),
  started_at: z.string(),
  build: z.string(),
  tasks: z.array(ServiceTaskSchema),
  slots: z.object({ used: z.number().int(), max: z.number().int() }),
  stopping: z.boolean(),
  /** What the service did with its tasks' spans (null: it traced none). */
  telemetry: TelemetryCountersSchema.nullable().default(null),
});
export type ServiceStatus = z.infer<typeof ServiceStatusSchema>;

export const ServiceResponseSchema = z.union([
  z.object({ ok: z.literal(true), status: ServiceStatusSchema.optional(), known: z.boolean().optional() }),
  z.object({ ok: z.literal(false), code: z.string(), message: z.string() }),
]);
export type ServiceResponse = z.infer<typeof ServiceResponseSchema>;

/** The longest request or response line accepted. */
export const MAX_SERVICE_LINE = 64 * 1024;
