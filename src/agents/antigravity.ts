import type { EventBody } from "../protocol/event.js";
import type { CommandLine, LaunchContext, LineAgentAdapter } from "./adapter.js";
import { displayCommand } from "./display.js";
import { nativeReportFrom, reportSchemaFile } from "./native-report.js";
import { promptArg } from "./prompt-arg.js";
import { int, num, parseObjectLine, rec, str } from "./stream-json.js";
import { StateTranslator } from "./stream-state.js";
import { summarizeToolInput } from "./tool-summary.js";
import { detectCli } from "./version.js";

/**
 * Google Antigravity CLI (`agy`), built from its documentation only: no binary can be installed or run
 * here (it ships outside npm), so nothing below is verified and `caesar doctor` says so.
 *
 * Documented (release notes of 1.1.8, docs/reference): print mode `-p <prompt>`, `--output-format
 * stream-json` (typed NDJSON: `init`, `step_update` with a `step_type` and a `tool_info` object, a
 * terminal `result`), `--json-schema <inline schema or file>` applied to the final result,
 * `--model`, `--dangerously-skip-permissions` (approvals only; it also approves sandbox bypasses, see
 * google-antigravity/antigravity-cli#36), `--sandbox`.
 */
export const antigravityAdapter: LineAgentAdapter = {
  id: "antigravity",
  displayName: "Antigravity CLI (agy)",
  kind: "builtin",
  product: "antigravity",
  capabilities: {
    network: {
      value: "open",
      why: "unverified: no documented network switch for print mode; --sandbox is bypassable under --dangerously-skip-permissions",
    },
    readOnly: {
      value: "none",
      why: "unverified: no documented read-only mode for print runs; caesar can only ask for it in the brief",
    },
    tools: { value: "none", why: "unverified: no documented per-tool switch for print mode" },
    nativeSchema: {
      value: true,
      why: "unverified: --json-schema constrains the final result event (documented since 1.1.8)",
    },
    mcp: {
      value: false,
      why: "unverified: MCP servers live in ~/.gemini/config/mcp_config.json; no per-run flag is documented",
    },
    resume: { value: false, why: "caesar does not resume sessions yet" },
    model: { value: true, why: "unverified: --model <id>" },
    unverified: true,
  },
  detect: (env) => detectCli({ bin: "agy" }, env),
  buildCommand: buildAntigravityCommand,
  createTranslator: () => new AntigravityTranslator(),
};

export function buildAntigravityCommand(launch: LaunchContext): CommandLine {
  const schema = reportSchemaFile(launch.runtimeDir, "plain");
  const prompt = promptArg(launch);
  const args = ["--output-format", "stream-json", "--json-schema", schema.path];
  // Approvals only: a print run has nobody to answer them. Read-only gets no bypass (and no guarantee).
  if (launch.mode === "write") args.push("--dangerously-skip-permissions");
  if (launch.model) args.push("--model", launch.model);
  args.push(...launch.extraArgs, "-p", prompt.text);
  return {
    bin: "agy",
    args,
    env: {},
    cwd: launch.task.workspace,
    files: [schema, ...prompt.files],
    display: displayCommand("agy", args),
  };
}

/**
 * A tolerant reading of the documented stream: the event kind under `type` (or `event`), steps keyed by
 * an id with a status, tools described by `tool_info`. Unknown shapes are ignored.
 */
export class AntigravityTranslator extends StateTranslator {
  stdout(line: string): EventBody[] {
    const event = parseObjectLine(line);
    if (!event) return [];
    const kind = str(event.type) ?? str(event.event);
    if (kind === "step_update") return this.step(event);
    if (kind === "result") return this.result(event);
    if (kind === "error") {
      const message = str(event.message) ?? str(rec(event.error).message) ?? "error";
      const failure = this.state.fail(message, int(rec(event.error).code));
      return this.state.errorEvent(message, failure.code);
    }
    return [];
  }

  private step(event: Record<string, unknown>): EventBody[] {
    const step = { ...event, ...rec(event.step) };
    const id = str(step.step_id) ?? str(step.id);
    const stepType = str(step.step_type) ?? "";
    const status = (str(step.status) ?? "").toLowerCase();
    const toolInfo = rec(step.tool_info);
    const toolName = str(toolInfo.name) ?? str(toolInfo.tool_name);
    const done = /complete|done|success|finished/.test(status);
    const failed = /error|fail|cancel/.test(status);
    if (toolName) {
      const input = summarizeToolInput(toolInfo.input ?? toolInfo.args ?? toolInfo.arguments ?? toolInfo);
      if (done || failed) {
        return this.state.tools.end(id, {
          ok: done,
          tool: toolName,
          input,
          output: toolInfo.output ?? step.output,
        });
      }
      return this.state.tools.start(id, toolName, input);
    }
    const text = str(step.text) ?? str(step.content) ?? "";
    if (/thought|thinking|reasoning/.test(stepType) && text) return [{ type: "thinking", text }];
    if (/message|response|text/.test(stepType) && done) return this.state.message(text);
    return [];
  }

  private result(event: Record<string, unknown>): EventBody[] {
    const result = rec(event.result);
    const response = str(event.response) ?? str(result.response) ?? str(event.result);
    if (response !== undefined) {
      this.state.finalText = response;
      const report = nativeReportFrom(response);
      if (report !== undefined) this.state.nativeReport = report;
    }
    const structured = event.structured_output ?? result.structured_output;
    if (structured !== undefined) {
      const report = nativeReportFrom(structured);
      if (report !== undefined) this.state.nativeReport = report;
    }
    const usage = rec(event.usage ?? result.usage);
    this.state.setUsage({ input_tokens: num(usage.input_tokens), output_tokens: num(usage.output_tokens) });
    const error = str(rec(event.error).message) ?? (event.is_error === true ? response : undefined);
    if (error) {
      const failure = this.state.fail(error);
      return this.state.errorEvent(error, failure.code);
    }
    return [];
  }
}
