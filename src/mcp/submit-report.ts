import { join } from "node:path";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { EventWriter } from "../engine/event-log.js";
import { CHANNEL_REPORT_FILE } from "../engine/recover.js";
import { formatProblem, safeParseDocument } from "../protocol/documents.js";
import { ReportSchema } from "../protocol/report.js";
import type { Task } from "../protocol/task.js";
import { taskPaths } from "../protocol/task-dir.js";
import { PROTOCOLS } from "../protocol/versions.js";
import { writeJsonAtomic } from "../support/atomic-file.js";
import { CaesarError } from "../support/errors.js";
import { runTool, toolResult } from "./tool-result.js";

/** The report's own schema, with `protocol` and `task_id` optional: the channel knows both. */
const SubmitReportShape = {
  ...ReportSchema.shape,
  protocol: ReportSchema.shape.protocol.optional().describe(`Optional; "${PROTOCOLS.report}" if given.`),
  task_id: z.string().optional().describe("Optional; this task's id if given."),
};

/**
 * `submit_report`: validate the report against caesar.report/v1 at once; an invalid one comes back with
 * every problem and nothing recorded; a valid one is written atomically to channel-report.json, where
 * the conductor takes it as tier 1 of report recovery. A later valid submission replaces it.
 */
export function registerSubmitReport(server: McpServer, options: { dir: string; task: Task }): void {
  server.registerTool(
    "submit_report",
    {
      title: "Submit your report",
      description: [
        "Hand in your final report on the task (caesar.report/v1) when your work is done — or when you are blocked and need a decision (status `blocked`, with `questions`).",
        "It is validated at once: if it is invalid you get the list of problems back and nothing is recorded, so fix them and call again. A valid report is recorded; calling again replaces it.",
        "Required: `status` (success: the acceptance criteria are met; partial: some work left, say what in `next_steps`; failed: no way forward; blocked: a decision outside your scope is needed, put it in `questions`) and `summary`.",
        "`changes` is your declaration: the orchestrator checks it against git, so list what you really changed.",
      ].join(" "),
      inputSchema: SubmitReportShape,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    async (args) =>
      runTool(async () => {
        const { dir, task } = options;
        if (args.task_id !== undefined && args.task_id !== task.id) {
          throw new CaesarError(
            "wrong_task",
            `This channel serves task ${task.id}; the report names ${args.task_id}. Nothing was recorded.`,
            { detail: `Omit task_id, or set it to ${task.id}, and submit again.` },
          );
        }
        const raw = { ...args, protocol: args.protocol ?? PROTOCOLS.report, task_id: task.id };
        const parsed = safeParseDocument("report", raw);
        if (!parsed.ok) {
          throw new CaesarError(
            "invalid_report",
            `The report is not a valid ${PROTOCOLS.report} report; nothing was recorded.`,
            {
              detail: `Fix these and call submit_report again:\n${parsed.problems.map(formatProblem).join("\n")}`,
            },
          );
        }
        await writeJsonAtomic(join(dir, CHANNEL_REPORT_FILE), parsed.value);
        await new EventWriter(taskPaths(dir).events, task.id).append({
          type: "progress",
          message: `report submitted through the return channel (${parsed.value.status})`,
        });
        return toolResult(
          { recorded: true, status: parsed.value.status },
          `Report recorded (${parsed.value.status}). caesar checks its changes against git when you exit; submitting again replaces it.`,
        );
      }),
  );
}
