import { readFile } from "node:fs/promises";
import { parse as parseYaml } from "yaml";
import { UsageError } from "../support/errors.js";
import * as z from "../support/zod.js";

/**
 * A scenario: what the scripted model does, turn after turn. The server is stateless: the step to play
 * is the number of scripted tool calls that already have a result in the conversation it receives.
 */

const delay = { delay_ms: z.number().int().min(0).max(600_000).optional() };

export const ShellStepSchema = z
  .strictObject({
    shell: z.string().min(1).describe("Call the agent's shell tool with this command."),
    description: z.string().optional(),
    /** Call a tool of this name even when the agent did not offer one (to test denials). */
    force_tool: z.string().optional(),
    ...delay,
  })
  .describe("shell");

export const WriteStepSchema = z
  .strictObject({
    write: z.strictObject({ path: z.string().min(1), content: z.string() }),
    force_tool: z.string().optional(),
    ...delay,
  })
  .describe("write");

export const CallStepSchema = z
  .strictObject({
    call: z.strictObject({
      tool: z.string().min(1).describe("A substring of the tool's name (MCP tools carry a per-CLI prefix)."),
      arguments: z.record(z.string(), z.unknown()).default({}),
    }),
    ...delay,
  })
  .describe("call");

export const TextStepSchema = z
  .strictObject({
    text: z.string().describe("The final answer. `{{last_result}}` is the last tool result."),
    ...delay,
  })
  .describe("text");

export const ReportStepSchema = z
  .strictObject({
    report: z
      .looseObject({
        status: z.enum(["success", "partial", "failed", "blocked"]).default("success"),
        summary: z.string().min(1),
      })
      .describe("A caesar.report/v1 (protocol is added)."),
    ...delay,
  })
  .describe("report");

export const FailStepSchema = z
  .strictObject({
    fail: z.strictObject({
      status: z.number().int().min(400).max(599),
      message: z.string().optional(),
      retry_after: z.number().int().min(0).optional(),
    }),
    ...delay,
  })
  .describe("fail");

export const HangStepSchema = z
  .strictObject({ hang: z.literal(true).describe("Accept the request and never answer.") })
  .describe("hang");

export const NextTurnStepSchema = z
  .strictObject({
    next_turn: z
      .string()
      .min(1)
      .describe(
        "The steps after this one play once a message of the conversation contains this text (a follow-up prompt, a resumed session, or a new run whose brief says it).",
      ),
  })
  .describe("next_turn");

export const StepSchema = z.union([
  ShellStepSchema,
  WriteStepSchema,
  CallStepSchema,
  TextStepSchema,
  ReportStepSchema,
  FailStepSchema,
  HangStepSchema,
  NextTurnStepSchema,
]);
export type Step = z.infer<typeof StepSchema>;

export const ScenarioSchema = z.strictObject({
  name: z.string().default("custom"),
  description: z.string().optional(),
  steps: z.array(StepSchema).min(1),
});
export type Scenario = z.infer<typeof ScenarioSchema>;

const HELLO_REPORT = {
  status: "success" as const,
  summary: "Created hello.txt containing OK.",
  changes: [{ path: "hello.txt", action: "added" as const }],
  commands_run: [{ command: "echo OK > hello.txt", exit_code: 0 }],
};

/** Scenarios that need no file: `--scenario hello`, `--scenario fail-401`, … */
export const BUILTIN_SCENARIOS: Record<string, Scenario> = {
  hello: {
    name: "hello",
    description: "Run `echo OK > hello.txt` with the shell tool, then answer with a report.",
    steps: [{ shell: "echo OK > hello.txt", description: "Write hello.txt" }, { report: HELLO_REPORT }],
  },
  "hello-text": {
    name: "hello-text",
    description: "Run `echo OK > hello.txt` with the shell tool, then answer in plain text.",
    steps: [
      { shell: "echo OK > hello.txt", description: "Write hello.txt" },
      { text: "Done: wrote hello.txt" },
    ],
  },
  "write-file": {
    name: "write-file",
    description: "Create written.txt with the agent's file-writing tool, then answer.",
    steps: [{ write: { path: "written.txt", content: "OK\n" } }, { text: "Done: wrote written.txt" }],
  },
  channel: {
    name: "channel",
    description:
      "Ask the orchestrator a question through the return channel, then submit a report through it.",
    steps: [
      { call: { tool: "ask_orchestrator", arguments: { question: "Proceed with hello.txt?" } } },
      { shell: "echo OK > hello.txt", description: "Write hello.txt" },
      {
        call: {
          tool: "submit_report",
          arguments: { report: { protocol: "caesar.report/v1", ...HELLO_REPORT } },
        },
      },
      { text: "Report submitted. The orchestrator said: {{result:1}}" },
    ],
  },
  "edit-attempt": {
    name: "edit-attempt",
    description:
      "Try to write hello.txt with the shell and forbidden.txt with the file tool, then report: a read-only task must refuse both.",
    steps: [
      { shell: "echo OK > hello.txt", description: "Write hello.txt" },
      { write: { path: "forbidden.txt", content: "x\n" } },
      { report: { status: "success", summary: "Reviewed." } },
    ],
  },
  "fix-on-retry": {
    name: "fix-on-retry",
    description:
      "Write value.txt = broken and claim success; on a follow-up saying `attempt 2 of` (failing checks), write value.txt = fixed.",
    steps: [
      { shell: "echo broken > value.txt", description: "Write value.txt" },
      { report: { status: "success", summary: "value.txt is written; the tests pass." } },
      { next_turn: "attempt 2 of" },
      { shell: "echo fixed > value.txt", description: "Fix value.txt" },
      { report: { status: "success", summary: "Fixed value.txt; the check passes now." } },
    ],
  },
  "fail-401": {
    name: "fail-401",
    description: "Answer every request with 401 Unauthorized.",
    steps: [{ fail: { status: 401, message: "mock: invalid api key" } }],
  },
  "fail-429": {
    name: "fail-429",
    description: "Answer every request with 429 Too Many Requests.",
    steps: [{ fail: { status: 429, message: "mock: rate limit exceeded", retry_after: 1 } }],
  },
  "fail-500": {
    name: "fail-500",
    description: "Answer every request with 500 Internal Server Error.",
    steps: [{ fail: { status: 500, message: "mock: internal error" } }],
  },
  hang: {
    name: "hang",
    description: "Accept every request and never answer (to test deadlines and stall notices).",
    steps: [{ hang: true }],
  },
};

export const DEFAULT_SCENARIO = "hello";

/** Parse a scenario from JSON or YAML text; errors say where the document is wrong. */
export function parseScenario(text: string, origin = "scenario"): Scenario {
  let raw: unknown;
  try {
    raw = parseYaml(text); // YAML is a superset of JSON
  } catch (error) {
    throw new UsageError("invalid_scenario", `${origin} is neither JSON nor YAML`, {
      detail: error instanceof Error ? error.message : String(error),
    });
  }
  const parsed = ScenarioSchema.safeParse(Array.isArray(raw) ? { steps: raw } : raw);
  if (!parsed.success) {
    const detail = parsed.error.issues
      .map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`)
      .join("\n");
    throw new UsageError("invalid_scenario", `${origin} is not a valid scenario`, {
      detail: `${detail}\nA scenario is {steps: [...]}, each step one of shell, write, call, text, report, fail, hang, next_turn (docs/mock-model.md).`,
    });
  }
  return parsed.data;
}

/** A built-in scenario by name, or a JSON/YAML file by path. */
export async function loadScenario(nameOrPath: string): Promise<Scenario> {
  const builtin = BUILTIN_SCENARIOS[nameOrPath];
  if (builtin) return builtin;
  let text: string;
  try {
    text = await readFile(nameOrPath, "utf8");
  } catch {
    throw new UsageError("scenario_not_found", `No built-in scenario or file named ${nameOrPath}`, {
      detail: `Built-in scenarios: ${Object.keys(BUILTIN_SCENARIOS).join(", ")}. Or give the path of a JSON/YAML file.`,
    });
  }
  return parseScenario(text, nameOrPath);
}
