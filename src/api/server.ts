import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { CaesarError, errnoOf } from "../support/errors.js";
import { recordProcess } from "../support/process.js";
import { removeServeAddress, writeServeAddress } from "./address-file.js";
import type { ApiContext } from "./api-context.js";
import { createApp } from "./app.js";
import { TaskIndex, type TaskIndexOptions } from "./index/task-index.js";
import { DEFAULT_HOST, DEFAULT_PORT } from "./protocol-ids.js";
import { loginUrl } from "./routes/session-routes.js";
import { StreamRegistry } from "./routes/stream-registry.js";
import { isLoopbackHost } from "./security/access.js";
import { LoginSessions } from "./security/sessions.js";
import { loadOrCreateToken, readToken } from "./security/token.js";
import { ChangeReader } from "./views/change-view.js";
import { RepositoryCatalog } from "./views/repository-view.js";

export { DEFAULT_HOST, DEFAULT_PORT } from "./protocol-ids.js";

export interface ServeOptions {
  root: string;
  version: string;
  port?: number;
  host?: string;
  /** The bearer token; default: the workspace's (.caesar/state/serve/token). */
  token?: string;
  index?: TaskIndexOptions;
  /** Record the address under .caesar/state/serve/ for `caesar query` (default true). */
  writeAddress?: boolean;
}

export interface RunningServer {
  url: string;
  /** The one-time login URL for the dashboard (printed by `caesar serve`; spent by its first use). */
  loginUrl: string;
  host: string;
  port: number;
  context: ApiContext;
  close(): Promise<void>;
}

/** Build everything a server needs around an index — also what in-process tests use, without listening. */
export async function makeApiContext(
  options: ServeOptions & { port: number; host: string },
): Promise<ApiContext> {
  const index = await TaskIndex.open(options.root, options.index);
  return {
    root: options.root,
    version: options.version,
    index,
    repositories: await RepositoryCatalog.open(index),
    changes: new ChangeReader(),
    access: {
      token: options.token ?? (await loadOrCreateToken(options.root)),
      ...(options.token === undefined ? { currentToken: () => readToken(options.root) } : {}),
      port: options.port,
      host: options.host,
      origin: `http://${localHostFor(options.host)}:${options.port}`,
    },
    sessions: new LoginSessions(),
    streams: new StreamRegistry(),
  };
}

/**
 * Index the workspace, then serve it. Loopback unless told otherwise; another address needs a token
 * (checked by the command, and again here).
 */
export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const host = options.host ?? DEFAULT_HOST;
  if (!isLoopbackHost(host) && options.token === undefined) {
    throw new CaesarError("token_required", `Refusing to serve on ${host} without a token.`);
  }
  const context = await makeApiContext({ ...options, host, port: options.port ?? DEFAULT_PORT });
  const app = createApp(context);
  const server = createAdaptorServer({ fetch: app.fetch });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? DEFAULT_PORT, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    context.index.close();
    if (errnoOf(error) === "EADDRINUSE") {
      throw new CaesarError(
        "port_in_use",
        `Port ${options.port ?? DEFAULT_PORT} on ${host} is already in use.`,
        {
          detail:
            "Stop what listens there, or pass --port <n> (--port 0 picks a free one; `caesar query` finds it).",
        },
      );
    }
    throw new CaesarError("listen_failed", `Cannot listen on ${host}:${options.port ?? DEFAULT_PORT}.`, {
      detail: (error as Error).message,
      cause: error,
    });
  }
  const port = (server.address() as AddressInfo).port;
  context.access.port = port;
  context.access.origin = `http://${localHostFor(host)}:${port}`;
  const url = `${context.access.origin}/`;
  const runId = context.index.runId;
  if (options.writeAddress !== false) {
    const { start } = recordProcess(process.pid);
    await writeServeAddress(options.root, {
      url,
      host,
      port,
      pid: process.pid,
      ...(start === undefined ? {} : { start }),
      runId,
      started_at: new Date().toISOString(),
      token: options.token === undefined ? "file" : "option",
    }).catch(async (error) => {
      await closeServer(server);
      context.index.close();
      throw error;
    });
  }
  let closing: Promise<void> | undefined;
  return {
    url,
    loginUrl: loginUrl(context, context.sessions.mintCode()),
    host,
    port,
    context,
    close() {
      closing ??= (async () => {
        context.streams.closeAll();
        context.index.close();
        await closeServer(server);
        if (options.writeAddress !== false) await removeServeAddress(options.root, runId);
      })();
      return closing;
    },
  };
}

function closeServer(server: ReturnType<typeof createAdaptorServer>): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    if ("closeAllConnections" in server) server.closeAllConnections();
  });
}

/**
 * How a local client reaches a server bound to `host`: the wildcard addresses include loopback. (A named
 * `--host` is kept: login links must name an address the browser can use and the Host check accepts.)
 */
function localHostFor(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::" || host === "[::]") return "[::1]";
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}
