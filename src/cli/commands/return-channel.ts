import type { Command } from "commander";
import { type CommandDefinition, handle } from "../command.js";

export const returnChannelCommand: CommandDefinition = {
  name: "return-channel",
  group: "integrate",
  define(program: Command) {
    // `channel` was this command's name in 0.1; kept as an alias for a release.
    const channel = program
      .command("return-channel")
      .alias("channel")
      .description("the per-task return channel an agent CLI starts (MCP over stdio)")
      .helpCommand(false);
    channel
      .command("serve")
      .description(
        "serve one task's return channel on stdin/stdout: get_task, report_progress, ask_orchestrator, submit_report",
      )
      .option(
        "--task-dir <dir>",
        "the task directory (else $CAESAR_CHANNEL_TASK_DIR; never $CAESAR_TASK_DIR)",
      )
      .option(
        "--answer-timeout <duration>",
        "longest wait of ask_orchestrator (never beyond the task's deadline)",
        "5m",
      )
      .action(
        handle(async (ctx) => {
          // First, before anything reads the environment: the CLI that started us may have passed its keys.
          const { dropProviderCredentials } = await import("../../support/provider-credentials.js");
          const dropped = dropProviderCredentials(process.env);
          const { parseDuration } = await import("../../support/duration.js");
          const { resolveReturnChannelTask } = await import("../../mcp/return-channel-task-dir.js");
          const { createReturnChannelServer } = await import("../../mcp/return-channel-server.js");
          const { serveStdio } = await import("../../mcp/stdio.js");
          const maxWaitMs = parseDuration(String(ctx.options.answerTimeout), "--answer-timeout");
          const channelTask = await resolveReturnChannelTask(
            ctx.options.taskDir as string | undefined,
            process.env,
          );
          if (dropped.length > 0) {
            process.stderr.write(
              `caesar return-channel: dropped ${dropped.length} inherited credential variable(s): ${dropped.join(", ")}\n`,
            );
          }
          const session = new AbortController();
          const server = createReturnChannelServer({ ...channelTask, maxWaitMs, session: session.signal });
          await serveStdio(server, session);
        }),
      );
    return channel;
  },
};
