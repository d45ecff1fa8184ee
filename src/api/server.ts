import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { CaesarError, errnoOf } from "../support/errors.js";
import { removeServeAddress, writeServeAddress } from "./address-file.js";
import type { ApiContext } from "./api-context.js";
import { createApp } from "./app.js";
import { TaskIndex, type TaskIndexOptions } from "./index/task-index.js";
import { DEFAULT_HOST, DEFAULT_PORT } from "./protocol-ids.js";
import { StreamRegistry } from "./routes/stream-registry.js";
import { isLoopbackHost } from "./security/access.js";
import { loadOrCreateToken } from "./security/token.js";
import { ChangeReader } from "./views/change-view.js";
import { RepositoryCatalog } from "./views/repository-view.js";

export { DEFAULT_HOST, DEFAULT_PORT } from "./protocol-ids.js";

export interface ServeOptions {
  root: string;
  version: string;
  port?: number;
  host?: string;
  /** The bearer token; default: the workspace's (.caesar/state/serve-token). */
  token?: string;
  index?: TaskIndexOptions;
  /** Record the address under .caesar/state/ for `caesar query` (default true). */
  writeAddress?: boolean;
}

export interface RunningServer {
  url: string;
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
      port: options.port,
      host: options.host,
    },
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
  const url = `http://${localHostFor(host)}:${port}/`;
  if (options.writeAddress !== false) {
    await writeServeAddress(options.root, {
      url,
      host,
      port,
      pid: process.pid,
      started_at: new Date().toISOString(),
    });
  }
  let closing: Promise<void> | undefined;
  return {
    url,
    host,
    port,
    context,
    close() {
      closing ??= (async () => {
        context.streams.closeAll();
        context.index.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          if ("closeAllConnections" in server) server.closeAllConnections();
        });
        if (options.writeAddress !== false) await removeServeAddress(options.root, process.pid);
      })();
      return closing;
    },
  };
}

/** How a local client reaches a server bound to `host`: the wildcard addresses include loopback. */
function localHostFor(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::" || host === "[::]") return "[::1]";
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}
