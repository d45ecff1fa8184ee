import type { Command } from "commander";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";
import { refuseInsideTask } from "../config-guard.js";

export const mcpCommand: CommandDefinition = {
  name: "mcp",
  group: "integrate",
  define(program: Command) {
    const mcp = program
      .command("mcp")
      .description("caesar's own MCP server, for agents that delegate (caesar_delegate, caesar_await, …)")
      .helpCommand(false);

    mcp
      .command("serve")
      .description("serve the orchestrator's tools on stdin/stdout for this project (MCP over stdio)")
      .option("--root <dir>", "project root (default: the nearest directory holding .caesar/ or .git)")
      .action(
        handle(async (ctx) => {
          const { createOrchestratorServer } = await import("../../mcp/orchestrator-server.js");
          const { serveStdio } = await import("../../mcp/stdio.js");
          const session = new AbortController();
          const server = await createOrchestratorServer({
            root: ctx.root,
            env: process.env,
            cwd: ctx.cwd,
            session: session.signal,
          });
          await serveStdio(server, session);
        }),
      );

    refuseInsideTask(
      withCommonOptions(
        mcp
          .command("install")
          .description(
            "register `caesar mcp serve` with an agent CLI (user level), merging with its configuration",
          )
          .argument("<client>", "claude, codex, copilot, gemini or opencode")
          .option("--dry-run", "show what would be run or written, change nothing")
          .option("--name <name>", "the server's name in the client (tool names derive from it)", "caesar"),
      ),
      "mcp install",
    ).action(
      handle(async (ctx, client) => {
        const { installClient } = await import("../../mcp/install.js");
        const outcome = await installClient(String(client), {
          name: String(ctx.options.name),
          dryRun: ctx.options.dryRun === true,
          env: process.env,
        });
        ctx.out.result(outcome, () => renderInstall(outcome));
      }),
    );
    return mcp;
  },
};

function renderInstall(
  outcome: Awaited<ReturnType<typeof import("../../mcp/install.js").installClient>>,
): string {
  const server = [outcome.server.command, ...outcome.server.args].join(" ");
  if (outcome.status === "already-installed")
    return `${outcome.client}: "${outcome.name}" is already registered in ${outcome.file}; nothing changed.`;
  const how =
    outcome.command !== null
      ? `run: ${outcome.command.map((arg) => (/[\s"']/.test(arg) ? JSON.stringify(arg) : arg)).join(" ")}`
      : `edit: ${outcome.file}`;
  if (outcome.status === "dry-run") {
    return [
      `${outcome.client}: would register "${outcome.name}" → ${server}`,
      `  how   ${how}`,
      `  why   ${outcome.why}`,
      ...(outcome.content !== null ? ["  the file would become:", outcome.content] : []),
      "Nothing was changed (--dry-run).",
    ].join("\n");
  }
  return [
    `${outcome.client}: registered "${outcome.name}" → ${server}`,
    `  in    ${outcome.file}`,
    `  how   ${how}`,
  ].join("\n");
}
