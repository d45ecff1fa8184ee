import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { EventWriter } from "../engine/store/event-log.js";
import { readTaskText } from "../engine/store/task-files.js";
import { taskPaths } from "../protocol/task-dir.js";
import * as z from "../support/zod.js";
import { answerWindow, registerAskOrchestrator } from "./ask-orchestrator.js";
import { chatNameOfTask, mountChatTools } from "./chat-mount.js";
import type { ChannelTask } from "./return-channel-task-dir.js";
import { registerSubmitReport } from "./submit-report.js";
import { runTool, toolResult } from "./tool-result.js";
import { PACKAGE_VERSION } from "./version.js";

export interface ChannelServerOptions extends ChannelTask {
  maxWaitMs: number;
  session: AbortSignal;
}

const instructions = (
  chatName: string,
) => `This server is the return channel of the caesar task you are working on: the orchestrator that delegated it reads what you send here.
- get_task: the task as written (objective, constraints, acceptance criteria, deadline).
- report_progress: a short note on where you are, now and then.
- ask_orchestrator: a question when a decision is outside your scope; it waits for the answer (if none comes in time, proceed on your best judgement).
- submit_report: your final report, validated at once; fix and resubmit if it is refused.
- caesar_chat_*: the project's agent chat, where agents working in parallel coordinate; you post and read there as ${chatName}.`;

/** The per-task return channel: get_task, report_progress, ask_orchestrator, submit_report. */
export function createReturnChannelServer(options: ChannelServerOptions): McpServer {
  const { dir, task } = options;
  const chatName = chatNameOfTask(task.agent, task.id);
  const server = new McpServer(
    { name: "caesar-channel", version: PACKAGE_VERSION },
    { instructions: instructions(chatName) },
  );
  const events = new EventWriter(taskPaths(dir).events, task.id);

  server.registerTool(
    "get_task",
    {
      title: "Read the task",
      description:
        "Read your task as the orchestrator wrote it (task.json, caesar.task/v1): objective, context, constraints, acceptance_criteria, mode, workspace, deadline_ms. Also returns the deadline as a time and how many ms are left.",
      inputSchema: {},
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async () =>
      runTool(async () => {
        const written = JSON.parse((await readTaskText(taskPaths(dir).task)) ?? "null") as Record<
          string,
          unknown
        >;
        const window = await answerWindow(dir, task, Number.MAX_SAFE_INTEGER);
        const remaining =
          window.deadlineAt === null ? null : Math.max(0, Date.parse(window.deadlineAt) - Date.now());
        return toolResult({ task: written, deadline_at: window.deadlineAt, remaining_ms: remaining });
      }),
  );

  server.registerTool(
    "report_progress",
    {
      title: "Report progress",
      description:
        "Tell the orchestrator where you are: one short sentence (`message`) and, if you can estimate it, `pct` (0–100). It appears live in the task's event stream. Use it at milestones, not for every step.",
      inputSchema: {
        message: z
          .string()
          .trim()
          .min(1)
          .max(2_000)
          .describe("What you are doing or have done, in one sentence."),
        pct: z.number().min(0).max(100).optional().describe("Estimated completion, 0 to 100."),
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    async (args) =>
      runTool(async () => {
        const event = await events.append({
          type: "progress",
          message: args.message,
          ...(args.pct === undefined ? {} : { pct: args.pct }),
        });
        return toolResult({ recorded: true, seq: event.seq }, "Progress recorded.");
      }),
  );

  registerAskOrchestrator(server, options);
  registerSubmitReport(server, options);
  // A task dir is <root>/.caesar/tasks/<id>: its agents chat in <root>/.caesar/chat (their AGENT_CHAT_ROOT).
  mountChatTools(server, { agent: chatName, chatRoot: join(dir, "..", "..", "chat") });
  return server;
}
