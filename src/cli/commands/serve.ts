import type { Command } from "commander";
import { CaesarError, UsageError } from "../../support/errors.js";
import { type CommandContext, type CommandDefinition, handle, withCommonOptions } from "../command.js";
import { readSecretOption } from "../options.js";
import { withServerOption } from "./query.js";

export const serveCommand: CommandDefinition = {
  name: "serve",
  group: "integrate",
  define(program: Command) {
    const serve = withCommonOptions(
      program
        .command("serve")
        .description(
          "serve the workspace over HTTP: the agent query contract, mutations, and a live dashboard",
        )
        .option("--port <n>", "port to listen on (0: any free port)", "4173")
        .option("--host <address>", "address to bind (default 127.0.0.1; any other needs --token)")
        .option(
          "--token <@file|env:NAME>",
          "bearer token to require, read from a file or the environment (default: .caesar/state/serve/token)",
        )
        .option(
          "--rotate",
          "replace the workspace's token now (every running server takes the new one), then exit",
        )
        .option("--pin-token", "keep the workspace's token (by default each start replaces it)")
        .option(
          "--open",
          "open the dashboard's one-time login URL in a browser ($BROWSER, else the system's)",
        ),
    ).action(handle(runServe));

    withCommonOptions(
      withServerOption(
        serve
          .command("login")
          .description("print a new one-time login URL for the dashboard of a running server")
          .option("--token <@file|env:NAME>", "the server's --token, if it was started with one")
          .option("--open", "open it in a browser"),
      ),
    ).action(handle(runLogin));
    return serve;
  },
};

async function runServe(ctx: CommandContext): Promise<number> {
  const { startServer, DEFAULT_HOST } = await import("../../api/server.js");
  const { isLoopbackHost } = await import("../../api/security/access.js");
  const { MIN_TOKEN_LENGTH, rotateToken } = await import("../../api/security/token.js");
  const { PACKAGE_JSON } = await import("../../support/package-paths.js");
  const { readFile } = await import("node:fs/promises");
  const port = parsePort(String(ctx.options.port));
  const host = (ctx.options.host as string | undefined) ?? DEFAULT_HOST;
  const token = await readSecretOption(ctx.options.token as string | undefined, ctx.cwd, "--token");
  if (ctx.options.rotate === true) return rotate(ctx);
  if (token !== undefined && token.trim().length < MIN_TOKEN_LENGTH) {
    throw new UsageError("weak_token", `--token must be at least ${MIN_TOKEN_LENGTH} characters.`, {
      detail: "Generate one with: openssl rand -hex 32",
    });
  }
  if (!isLoopbackHost(host) && token === undefined) {
    throw new UsageError("token_required", `Refusing to serve on ${host} without --token.`, {
      detail:
        "Any address other than loopback exposes the workspace to the network: pass --token <@file|env:NAME> (every request from another machine must then carry it, or a dashboard session), or omit --host to bind 127.0.0.1.",
    });
  }
  const version = (JSON.parse(await readFile(PACKAGE_JSON, "utf8")) as { version: string }).version;
  // A new key at each start, unless pinned: a key that leaked works until the next start at most.
  if (token === undefined && ctx.options.pinToken !== true) await rotateToken(ctx.root);
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
    loginUrl: server.loginUrl,
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
    ctx.out.line(`Log in to the dashboard (a one-time link): ${server.loginUrl}`);
    ctx.out.notice(
      `${facts.tasks} task(s), ${facts.timelineEntries} timeline entries indexed in ${facts.indexMs} ms. Ctrl-C stops. \`caesar serve login\` prints a new login link.`,
    );
    if (!isLoopbackHost(host))
      ctx.out.notice(
        `Bound to ${host}: requests from other machines need the token or a session (plain HTTP: anyone on the network path can read them).`,
      );
  }
  if (ctx.options.open === true) await openLink(ctx, server.loginUrl);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await server.close();
  return 0;
}

/** `caesar serve --rotate`: a new workspace token, taken at once by every server that reads the file. */
async function rotate(ctx: CommandContext): Promise<number> {
  const { rotateToken, tokenPath } = await import("../../api/security/token.js");
  await rotateToken(ctx.root);
  ctx.out.result(
    { rotated: true, token_file: tokenPath(ctx.root) },
    `New token in ${tokenPath(ctx.root)}: the old one is refused by every server of this workspace from now on.`,
  );
  return 0;
}

/** `caesar serve login`: the token's holder asks the running server for a new one-time login URL. */
async function runLogin(ctx: CommandContext): Promise<void> {
  const { chooseServer, isInteractive } = await import("../query/server-choice.js");
  const { AgentClient } = await import("../query/client.js");
  const { readToken } = await import("../../api/security/token.js");
  const choice = await chooseServer(ctx.root, {
    server: ctx.options.server as string | undefined,
    interactive: isInteractive(ctx.json),
  });
  const given = await readSecretOption(ctx.options.token as string | undefined, ctx.cwd, "--token");
  if (given === undefined && choice.address?.token === "option") {
    throw new UsageError("token_required", `The server at ${choice.url.origin} was started with --token.`, {
      detail: "Pass the same --token <@file|env:NAME> to `caesar serve login`.",
    });
  }
  // The key goes only to a server of this workspace that proves it holds it: never to whatever listens on
  // the default port when none of this workspace runs.
  if (choice.fallback) {
    throw new CaesarError(
      "server_unproven",
      "No caesar server of this workspace is running: the key was sent nowhere.",
      {
        detail: `Start \`caesar serve\` in this workspace (it writes its address in .caesar/state/serve/), then run \`caesar serve login\` again; or name a server with --server <url>.`,
      },
    );
  }
  const token = given?.trim() ?? (await readToken(ctx.root));
  const client = new AgentClient(choice.url);
  await client.proveServer(token);
  const { url } = await client.mintLoginLink(token).catch((error: unknown) => {
    if (error instanceof CaesarError && error.code === "invalid_token") {
      throw new CaesarError(
        "invalid_token",
        `The server at ${choice.url.origin} does not accept this token.`,
        {
          detail:
            "It was started with --token (pass the same one), or it serves another workspace (pass --server, or unset CAESAR_URL).",
        },
      );
    }
    throw error;
  });
  ctx.out.result({ url, server: choice.url.origin }, url);
  if (ctx.options.open === true) await openLink(ctx, url);
}

async function openLink(ctx: CommandContext, url: string): Promise<void> {
  const { openInBrowser } = await import("../query/open-browser.js");
  const failure = await openInBrowser(url);
  if (failure) ctx.out.notice(`Could not open a browser (${failure}): open the link above yourself.`);
}

function parsePort(raw: string): number {
  const port = Number(raw);
  if (!/^\d{1,5}$/.test(raw) || port > 65535) {
    throw new UsageError("invalid_option", `--port ${JSON.stringify(raw)} is not a port number.`, {
      detail: "Pass 1–65535, or 0 for any free port.",
    });
  }
  return port;
}
