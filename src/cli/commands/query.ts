import type { Command } from "commander";
import { UsageError } from "../../support/errors.js";
import { type CommandContext, type CommandDefinition, handle, withCommonOptions } from "../command.js";
import { defineMutateCommands } from "../query/mutate-commands.js";

/**
 * `caesar query`: the command-line client of the agent query contract (cz-agent/1). It talks only to a
 * local server (--server, else CAESAR_URL, else the one `caesar serve` recorded — asking which when several
 * run — else http://127.0.0.1:4173), reads
 * the current revision before each query, follows no redirect and reports a conflict instead of retrying.
 */
export const queryCommand: CommandDefinition = {
  name: "query",
  group: "integrate",
  define(program: Command) {
    // `agent` was this command's name in 0.1 (beside `agents`, the adapters); kept as an alias for a release.
    const query = program
      .command("query")
      .alias("agent")
      .description(
        "query a served workspace over the agent contract (cz-agent/1): capabilities, timeline, repository, change",
      )
      .helpCommand(false);

    withCommonOptions(
      withServerOption(
        query
          .command("capabilities")
          .description("what the server offers: operations, endpoints, boundaries"),
      ),
    ).action(
      handle(async (ctx) => {
        const client = await clientFor(ctx);
        const { PATHS } = await import("../../api/protocol-ids.js");
        const capabilities = await client.get<Record<string, unknown>>(PATHS.capabilities);
        ctx.out.result(capabilities, () => renderCapabilities(capabilities, client.base.origin));
      }),
    );

    withCommonOptions(
      withServerOption(query.command("timeline"))
        .description("the events of all tasks, newest first")
        .argument("[actor]", 'only this actor: an agent id, or "user"')
        .option("--repo <id>", "only this repository (the project's id, or a task id for its worktree)")
        .option("--before <position>", "older than this position (the previous page's nextBefore)")
        .option("--limit <n>", "entries, 1–100", "20"),
    ).action(
      handle(async (ctx, actor) => {
        const client = await clientFor(ctx);
        const { renderTimeline } = await import("../query/render.js");
        const args: Record<string, unknown> = { limit: integer(ctx.options.limit, "--limit") };
        if (actor !== undefined) args.actor = actor;
        if (ctx.options.repo !== undefined) args.repo = ctx.options.repo;
        if (ctx.options.before !== undefined) args.before = integer(ctx.options.before, "--before");
        const response = await client.query<Parameters<typeof renderTimeline>[0]>("timeline.read", args);
        ctx.out.result(response, () => renderTimeline(response.result));
      }),
    );

    withCommonOptions(
      withServerOption(query.command("repository"))
        .description("a repository's metadata and source snapshot")
        .argument("<id>", "repository id"),
    ).action(
      handle(async (ctx, id) => {
        const client = await clientFor(ctx);
        const { renderRepository } = await import("../query/render.js");
        const response = await client.query<Parameters<typeof renderRepository>[0]>("repository.read", {
          id: String(id),
        });
        ctx.out.result(response, () => renderRepository(response.result));
      }),
    );

    withCommonOptions(
      withServerOption(query.command("change"))
        .description("a change: a task's result, report, findings and verified diff")
        .argument("<number>", "change number"),
    ).action(
      handle(async (ctx, number) => {
        const client = await clientFor(ctx);
        const { renderChange } = await import("../query/render.js");
        const response = await client.query<Parameters<typeof renderChange>[0]>("change.read", {
          number: integer(number, "<number>"),
        });
        ctx.out.result(response, () => renderChange(response.result));
      }),
    );
    defineMutateCommands(query, withServerOption, clientFor);
    return query;
  },
};

async function clientFor(ctx: CommandContext) {
  const { AgentClient } = await import("../query/client.js");
  const { chooseServer, isInteractive } = await import("../query/server-choice.js");
  const choice = await chooseServer(ctx.root, {
    server: ctx.options.server as string | undefined,
    interactive: isInteractive(ctx.json),
  });
  return new AgentClient(choice.url);
}

/** `--server`, for when several servers serve the workspace (or to name one elsewhere on this machine). */
export function withServerOption(command: Command): Command {
  return command.option(
    "--server <pid|url>",
    "which server: the pid of one of this workspace's, or a local URL (default: CAESAR_URL, else the running one)",
  );
}

/** Numbers are passed as typed; the server validates ranges (and says so). Non-numbers are refused here. */
function integer(value: unknown, flag: string): number {
  const text = String(value);
  if (!/^-?\d+$/.test(text)) {
    throw new UsageError("invalid_option", `${flag} ${JSON.stringify(text)} is not an integer.`);
  }
  return Number(text);
}

function renderCapabilities(c: Record<string, unknown>, origin: string): string {
  const operations = (c.operations as { name: string; result: string }[] | undefined) ?? [];
  const repositories = c.repositories as { project?: string } | undefined;
  return [
    `${c.protocol} at ${origin} — ${c.service} ${c.version}, provenance ${c.provenance}`,
    `run ${c.runId}, revision ${c.revision}`,
    ...operations.map((op) => `  ${op.name.padEnd(16)}${op.result}`),
    `project repository: ${repositories?.project ?? "?"}`,
    `mutations: ${(c.mutations as { protocol?: string } | undefined)?.protocol ?? "?"}`,
  ].join("\n");
}
