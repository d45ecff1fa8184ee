import type { Command } from "commander";
import { UsageError } from "../../support/errors.js";
import { type CommandDefinition, handle } from "../command.js";

export const acpCommand: CommandDefinition = {
  name: "acp",
  group: "integrate",
  define(program: Command) {
    return program
      .command("acp")
      .description(
        "be an ACP agent on stdin/stdout for editors (Zed, JetBrains, Neovim…): each prompt is a task delegated to an agent",
      )
      .option(
        "--agent <id>",
        "delegate every prompt to this agent (else the session's choice, else the project's default)",
      )
      .option("--role <name>", "delegate every prompt to this role")
      .option(
        "--root <dir>",
        "project root (default: the nearest .caesar/ or .git above the session's directory)",
      )
      .action(
        handle(async (ctx) => {
          const { agent, role, root } = ctx.options as { agent?: string; role?: string; root?: string };
          if (agent && role) {
            throw new UsageError("agent_and_role", "Give --agent or --role, not both.", {
              detail: "A role picks its own agent; --agent names one directly.",
            });
          }
          const { serveAcpStdio } = await import("../../acp/stdio.js");
          await serveAcpStdio({
            ...(root ? { root } : {}),
            ...(agent ? { delegate: { agent } } : role ? { delegate: { role } } : {}),
            env: process.env,
          });
        }),
      );
  },
};
