import { join } from "node:path";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CHANNEL_REPORT_FILE } from "../engine/conductor/recover.js";
import { EventWriter } from "../engine/store/event-log.js";
import { formatProblem, safeParseDocument } from "../protocol/documents.js";
import { ReportSchema } from "../protocol/report.js";
import type { Task } from "../protocol/task.js";
import { taskPaths } from "../protocol/task-dir.js";
import { PROTOCOLS } from "../protocol/versions.js";
import { writeJsonAtomic } from "../support/atomic-file.js";
import { CaesarError } from "../support/errors.js";
import * as z from "../support/zod.js";
import { runTool, toolResult } from "./tool-result.js";

/**
 * The report's own fields, as the tool's arguments — or the whole report under `report` (some agents
 * wrap it). Every field is optional here so that one validation, against caesar.report/v1 itself, names
 * every problem at once; `protocol` and `task_id` are filled in (the channel knows both).
 */
const REPORT_FIELDS = Object.keys(ReportSchema.shape);
const SubmitReportShape = {
  ...(Object.fromEntries(
    Object.entries(ReportSchema.shape).map(([key, schema]) => [key, optionalWithoutDefault(schema)]),
  ) as {
    [K in keyof typeof ReportSchema.shape]: z.ZodOptional<z.ZodType>;
  }),
  protocol: ReportSchema.shape.protocol.optional().describe(`Optional; "${PROTOCOLS.report}" if given.`),
  task_id: z.string().optional().describe("Optional; this task's id if given."),
  status: ReportSchema.shape.status
    .optional()
    .describe(`Required. ${ReportSchema.shape.status.description ?? ""}`),
  summary: ReportSchema.shape.summary.optional().describe("Required: what was done, in a sentence or two."),
  report: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("Alternatively, the whole report as one object (then give no other field)."),
};

/**
 * A field as an argument: optional, null read as absent (strict structured outputs send null), and without
 * its default (defaults are applied by the one real parse).
 */
function optionalWithoutDefault(schema: z.ZodType): z.ZodOptional<z.ZodType> {
  const inner = schema instanceof z.ZodDefault ? (schema.unwrap() as z.ZodType) : schema;
  return inner
    .nullable()
    .optional()
    .describe(schema.description ?? inner.description ?? "");
}

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
        "Give the fields directly, or the whole report as `report`.",
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
        const { report: wrapped, ...fields } = args;
        const given = Object.fromEntries(
          Object.entries(fields).filter(([, value]) => value !== undefined && value !== null),
        );
        if (wrapped && Object.keys(given).some((key) => REPORT_FIELDS.includes(key))) {
          throw new CaesarError(
            "ambiguous_report",
            "Give the report either as fields or as `report`, not both. Nothing was recorded.",
          );
        }
        const body = (wrapped ?? given) as Record<string, unknown>;
        const taskId = body.task_id;
        if (taskId !== undefined && taskId !== task.id) {
          throw new CaesarError(
            "wrong_task",
            `This channel serves task ${task.id}; the report names ${String(taskId)}. Nothing was recorded.`,
            { detail: `Omit task_id, or set it to ${task.id}, and submit again.` },
          );
        }
        const raw = { ...body, protocol: body.protocol ?? PROTOCOLS.report, task_id: task.id };
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
