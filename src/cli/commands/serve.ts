import type { Command } from "commander";
import { UsageError } from "../../support/errors.js";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";
import { readTextOrFile } from "../options.js";

export const serveCommand: CommandDefinition = {
  name: "serve",
  group: "integrate",
  define(program: Command) {
    return withCommonOptions(
      program
        .command("serve")
        .description(
          "serve the workspace over HTTP: the agent query contract, mutations, and a live dashboard",
        )
        .option("--port <n>", "port to listen on (0: any free port)", "4173")
        .option("--host <address>", "address to bind (default 127.0.0.1; any other needs --token)")
        .option("--token <value|@file>", "bearer token to require (default: .caesar/state/serve-token)"),
    ).action(
      handle(async (ctx) => {
        const { startServer, DEFAULT_HOST } = await import("../../api/server.js");
        const { isLoopbackHost } = await import("../../api/security/access.js");
        const { MIN_TOKEN_LENGTH } = await import("../../api/security/token.js");
        const { PACKAGE_JSON } = await import("../../support/package-paths.js");
        const { readFile } = await import("node:fs/promises");
        const port = parsePort(String(ctx.options.port));
        const host = (ctx.options.host as string | undefined) ?? DEFAULT_HOST;
        const token = await readTextOrFile(ctx.options.token as string | undefined, ctx.cwd, "--token");
        if (token !== undefined && token.trim().length < MIN_TOKEN_LENGTH) {
          throw new UsageError("weak_token", `--token must be at least ${MIN_TOKEN_LENGTH} characters.`, {
            detail: "Generate one with: openssl rand -hex 32",
          });
        }
        if (!isLoopbackHost(host) && token === undefined) {
          throw new UsageError("token_required", `Refusing to serve on ${host} without --token.`, {
            detail:
              "Any address other than loopback exposes the workspace to the network: pass --token <value|@file> (every request from another machine must then carry it), or omit --host to bind 127.0.0.1.",
          });
        }
        const version = (JSON.parse(await readFile(PACKAGE_JSON, "utf8")) as { version: string }).version;
        ctx.out.notice(`Indexing ${ctx.root} …`);
        const server = await startServer({
          root: ctx.root,
          version,
          port,
          host,
          ...(token === undefined ? {} : { token: token.trim() }),
        });
        const { index } = server.context;
        const facts = {
          url: server.url,
          host: server.host,
          port: server.port,
          pid: process.pid,
          runId: index.runId,
          tasks: index.size,
          timelineEntries: index.timeline.size,
          indexMs: Math.round(index.buildMs),
        };
        if (ctx.json) ctx.out.ndjson(facts);
        else {
          ctx.out.line(`caesar serve: ${server.url}`);
          ctx.out.notice(
            `${facts.tasks} task(s), ${facts.timelineEntries} timeline entries indexed in ${facts.indexMs} ms. Ctrl-C stops.`,
          );
          if (!isLoopbackHost(host))
            ctx.out.notice(`Bound to ${host}: requests from other machines need the token.`);
        }
        await new Promise<void>((resolve) => {
          const stop = () => resolve();
          process.once("SIGINT", stop);
          process.once("SIGTERM", stop);
        });
        await server.close();
        return 0;
      }),
    );
  },
};

function parsePort(raw: string): number {
  const port = Number(raw);
  if (!/^\d{1,5}$/.test(raw) || port > 65535) {
    throw new UsageError("invalid_option", `--port ${JSON.stringify(raw)} is not a port number.`, {
      detail: "Pass 1–65535, or 0 for any free port.",
    });
  }
  return port;
}
