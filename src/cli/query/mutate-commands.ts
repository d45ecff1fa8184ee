import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import { UsageError } from "../../support/errors.js";
import { type CommandContext, handle, withCommonOptions } from "../command.js";

/**
 * `caesar query mutate capabilities | read | apply <request.json>`: the command-line client of the
 * mutation vocabulary (cz-mutate/1), as the agent query contract's own client does it for mutations —
 * the vocabulary's document, the revision a request is based on, and one request sent from a file with
 * the workspace's token. Nothing is retried: a stale revision is a conflict, said.
 */
export function defineMutateCommands(
  query: Command,
  withServer: (command: Command) => Command,
  clientFor: (ctx: CommandContext) => Promise<import("./client.js").AgentClient>,
): void {
  const mutate = query
    .command("mutate")
    .description("the mutation vocabulary (cz-mutate/1): capabilities, read, apply <request.json>")
    .helpCommand(false);

  withCommonOptions(
    withServer(
      mutate.command("capabilities").description("the mutation vocabulary: operations, authentication"),
    ),
  ).action(
    handle(async (ctx) => {
      const client = await clientFor(ctx);
      const { PATHS } = await import("../../api/protocol-ids.js");
      const document = await client.get<{ protocol?: string; operations?: { name: string }[] }>(
        PATHS.mutateCapabilities,
      );
      ctx.out.result(document, () =>
        [
          `${document.protocol ?? "?"} at ${client.base.origin}`,
          ...(document.operations ?? []).map((operation) => `  ${operation.name}`),
        ].join("\n"),
      );
    }),
  );

  withCommonOptions(
    withServer(
      mutate
        .command("read")
        .description("the run and revision a request is based on, and the envelope to fill in"),
    ),
  ).action(
    handle(async (ctx) => {
      const client = await clientFor(ctx);
      const { PATHS, MUTATE_PROTOCOL } = await import("../../api/protocol-ids.js");
      const { randomUUID } = await import("node:crypto");
      const state = await client.get<{ runId: string; version: number }>(PATHS.state);
      const envelope = {
        protocol: MUTATE_PROTOCOL,
        requestId: randomUUID(),
        runId: state.runId,
        revision: state.version,
        operation: "task.cancel",
        arguments: { task_id: "t_…" },
      };
      ctx.out.result({ runId: state.runId, revision: state.version, envelope }, () =>
        [
          `run ${state.runId}, revision ${state.version}`,
          "A request based on it (write it to a file, then `caesar query mutate apply <file>`):",
          JSON.stringify(envelope, null, 2),
        ].join("\n"),
      );
    }),
  );

  withCommonOptions(
    withServer(
      mutate
        .command("apply")
        .description("send one mutation from a file (- for stdin), with the workspace's token")
        .argument(
          "<request>",
          "a cz-mutate/1 envelope: protocol, requestId, runId, revision, operation, arguments",
        ),
    ),
  ).action(
    handle(async (ctx, file) => {
      const envelope = parseEnvelope(await readRequest(String(file)), String(file));
      const client = await clientFor(ctx);
      const { readToken } = await import("../../api/security/token.js");
      const response = await client.mutate<Record<string, unknown>>(envelope, await readToken(ctx.root));
      ctx.out.result(response, () => JSON.stringify(response, null, 2));
    }),
  );
}

async function readRequest(file: string): Promise<string> {
  if (file === "-") {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  }
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    throw new UsageError("invalid_argument", `Cannot read the request ${file}: ${(error as Error).message}.`);
  }
}

/** The file must hold one JSON object; the server validates the rest (and says what is wrong, 400). */
function parseEnvelope(text: string, file: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError("invalid_argument", `The request ${file} is not JSON.`, {
      detail: "Write a cz-mutate/1 envelope; `caesar query mutate read` prints one to fill in.",
    });
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new UsageError("invalid_argument", `The request ${file} is not a JSON object.`, {
      detail: "Write a cz-mutate/1 envelope; `caesar query mutate read` prints one to fill in.",
    });
  }
  return value as Record<string, unknown>;
}
