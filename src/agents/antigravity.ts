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
 * A tolerant reading of agy's stream: the kind under `event` (or `type`); a step's fields nested under
 * `step_update` (or `step`), its state in `state` (`ACTIVE`, `DONE`, `ERROR`…), its text arriving as
 * `text_delta` fragments while ACTIVE (the DONE update may name only its `step_index`); tools as
 * `tool_name` + `tool_info`; one terminal `result` whose `status` is `SUCCESS` or `ERROR`, with the error
 * as a plain string (`"error": "Individual quota reached…"`). Unknown shapes are ignored.
 */
export class AntigravityTranslator extends StateTranslator {
  /** Text of steps still arriving, and each step's type (a DONE update may not repeat it), by index. */
  private readonly pendingText = new Map<string, string>();
  private readonly stepTypes = new Map<string, string>();

  stdout(line: string): EventBody[] {
    const event = parseObjectLine(line);
    if (!event) return [];
    const kind = str(event.event) ?? str(event.type);
    if (kind === "step_update") return this.step(event);
    if (kind === "result") return this.result(event);
    if (kind === "error") {
      const message = str(event.message) ?? str(event.error) ?? str(rec(event.error).message) ?? "error";
      return this.failWith(message, int(rec(event.error).code));
    }
    return [];
  }

  private step(event: Record<string, unknown>): EventBody[] {
    const step = { ...event, ...rec(event.step), ...rec(event.step_update) };
    const index = num(step.step_index);
    const id = str(step.step_id) ?? str(step.id) ?? (index === undefined ? undefined : `step-${index}`);
    const key = id ?? "";
    const declaredType = str(step.step_type);
    if (declaredType && key) this.stepTypes.set(key, declaredType);
    const stepType = (declaredType ?? this.stepTypes.get(key) ?? "").toLowerCase();
    const state = (str(step.state) ?? str(step.status) ?? "").toLowerCase();
    const done = /complete|done|success|finished/.test(state);
    const failed = /error|fail|cancel/.test(state);
    const toolInfo = rec(step.tool_info);
    const toolName = str(step.tool_name) ?? str(toolInfo.name) ?? str(toolInfo.tool_name);
    if (toolName) {
      const input = summarizeToolInput(toolInfo.input ?? toolInfo.args ?? toolInfo.arguments ?? toolInfo);
      if (done || failed)
        return this.state.tools.end(id, {
          ok: done,
          tool: toolName,
          input,
          output: toolInfo.output ?? step.output,
        });
      return this.state.tools.start(id, toolName, input);
    }
    // The prompt echoed back, and system notices, are not the agent's words.
    if (/user_input|system/.test(stepType)) return [];
    const text = this.stepText(key, step, done || failed);
    if (text === undefined) return [];
    if (/thought|thinking|reasoning/.test(stepType)) return text ? [{ type: "thinking", text }] : [];
    if (/message|response|text/.test(stepType) || stepType === "") return this.state.message(text);
    return [];
  }

  /** The whole text of a step once it ends (fragments joined), or undefined while it is still arriving. */
  private stepText(key: string, step: Record<string, unknown>, ended: boolean): string | undefined {
    const whole = str(step.text) ?? str(step.content);
    const delta = str(step.text_delta);
    const sofar = this.pendingText.get(key) ?? "";
    if (!ended) {
      if (delta !== undefined) this.pendingText.set(key, sofar + delta);
      return undefined;
    }
    this.pendingText.delete(key);
    if (whole !== undefined) return whole;
    if (delta === undefined) return sofar === "" ? undefined : sofar;
    // The DONE update carries the last fragment, or (some builds) the whole text again.
    return sofar !== "" && delta.startsWith(sofar) ? delta : sofar + delta;
  }

  private result(event: Record<string, unknown>): EventBody[] {
    const result = rec(event.result);
    const response = str(result.response) ?? str(event.response) ?? str(event.result);
    if (response !== undefined && response !== "") {
      this.state.finalText = response;
      const report = nativeReportFrom(response);
      if (report !== undefined) this.state.nativeReport = report;
    }
    const structured = event.structured_output ?? result.structured_output;
    if (structured !== undefined) {
      const report = nativeReportFrom(structured);
      if (report !== undefined) this.state.nativeReport = report;
    }
    const usage = rec(result.usage ?? event.usage);
    this.state.setUsage({ input_tokens: num(usage.input_tokens), output_tokens: num(usage.output_tokens) });
    const status = (str(result.status) ?? str(event.status) ?? "").toUpperCase();
    const failedStatus = /ERROR|FAIL|CANCEL/.test(status) || event.is_error === true;
    const error =
      str(result.error) ??
      str(rec(result.error).message) ??
      str(event.error) ??
      str(rec(event.error).message) ??
      (failedStatus ? response || `agy ended with status ${status || "error"}` : undefined);
    return error ? this.failWith(error, int(rec(result.error).code) ?? int(rec(event.error).code)) : [];
  }

  private failWith(message: string, status?: number): EventBody[] {
    const failure = this.state.fail(message, status);
    return this.state.errorEvent(failure.message, failure.code);
  }
}
