import type { EventBody } from "../protocol/event.js";
import type { Finding, Usage } from "../protocol/report.js";
import type { ErrorCode } from "../support/error-catalogue.js";
import type { ProcessExit, StreamOutcome, StreamTranslator, TranslatedEvents } from "./adapter.js";
import { type Failure, type FailureCode, failureWords, makeFailure } from "./failure.js";
import { displayMessage } from "./message-text.js";
import { ToolTracker } from "./tool-tracker.js";

const MAX_FINDINGS = 100;
/** How much of stderr is kept to explain a failure the stream did not. */
const STDERR_TAIL_LINES = 20;

/**
 * What every translator accumulates while a stream runs: open tools, token usage, findings, the last
 * message, a failure. `outcome()` turns it into the StreamOutcome the engine reads after exit.
 */
export class StreamState {
  readonly tools = new ToolTracker();
  readonly findings: Finding[] = [];
  private readonly findingKeys = new Set<string>();
  private usage: Usage = {};
  failure?: Failure;
  /** A likely cause seen while the agent kept going (retries): the failure if the run ends badly. */
  suspected?: Failure;
  finalText?: string;
  nativeReport?: unknown;
  /** The CLI's session id (the first one the stream names). */
  session?: string;
  private readonly stderrTail: string[] = [];
  private readonly errorsSeen = new Set<string>();
  /** The words of every `error` event written, to tell whether the failure was already announced. */
  private readonly errorWords = new Set<string>();

  addUsage(input?: number, output?: number): void {
    if (input !== undefined) this.usage.input_tokens = (this.usage.input_tokens ?? 0) + input;
    if (output !== undefined) this.usage.output_tokens = (this.usage.output_tokens ?? 0) + output;
  }

  /** Replace usage with totals the CLI computed itself (a final `result` line). */
  setUsage(totals: Usage): void {
    this.usage = { ...this.usage, ...definedOnly(totals) };
  }

  addFinding(finding: Finding, key = `${finding.title}\n${finding.detail ?? ""}`): void {
    if (this.findingKeys.has(key) || this.findings.length >= MAX_FINDINGS) return;
    this.findingKeys.add(key);
    this.findings.push(finding);
  }

  /** A permission the CLI denied: the run may still end in "success", the report must say it. */
  denied(tool: string, detail: string, key?: string): void {
    this.addFinding(
      {
        severity: "medium",
        title: `Permission denied: ${tool || "a tool call"}`,
        detail: detail.slice(0, 1000),
      },
      key ?? `denied\n${tool}\n${detail}`,
    );
  }

  /** Record a failure (the first one wins: later errors are usually consequences). */
  fail(detail: string, status?: number, code?: FailureCode): Failure {
    this.failure ??= makeFailure(detail, status, code);
    return this.failure;
  }

  /** Remember a likely cause without failing yet: CLIs retry, and may still succeed. */
  suspect(detail: string, status?: number, code?: FailureCode): Failure {
    this.suspected = makeFailure(detail, status, code);
    return this.suspected;
  }

  /**
   * A retry the CLI announced (a 429, a reconnect): remembered as the likely cause should the run end
   * badly, and shown as `progress` — it is not a failure yet, and a failure gets one `error` event.
   */
  retrying(
    detail: string,
    options: { status?: number; code?: FailureCode; notice?: string } = {},
  ): EventBody[] {
    this.suspect(detail, options.status, options.code);
    const message = (options.notice ?? detail).slice(0, 2000);
    const key = `retry\n${message}`;
    if (this.errorsSeen.has(key)) return [];
    this.errorsSeen.add(key);
    return [{ type: "progress", message }];
  }

  /** An `error` event, once per distinct message (some CLIs repeat a retry notice dozens of times). */
  errorEvent(message: string, code?: ErrorCode): EventBody[] {
    const key = `${code ?? ""}\n${message}`;
    if (this.errorsSeen.has(key)) return [];
    this.errorsSeen.add(key);
    this.errorWords.add(failureWords(message));
    return [{ type: "error", message: message.slice(0, 2000), ...(code ? { code } : {}) }];
  }

  message(text: string, role = "assistant"): EventBody[] {
    if (text.trim() === "") return [];
    if (role === "assistant") this.finalText = text;
    return [{ type: "message", text: displayMessage(text), role }];
  }

  noteStderr(line: string): void {
    if (line.trim() === "") return;
    this.stderrTail.push(line.slice(0, 500));
    if (this.stderrTail.length > STDERR_TAIL_LINES) this.stderrTail.shift();
  }

  /** Did an `error` event already carry this failure (its message, or the agent's words in it)? */
  private wasAnnounced(failure: Failure): boolean {
    return this.errorWords.has(failureWords(failure.message)) || this.errorWords.has(failure.detail);
  }

  get lastStderr(): string {
    return this.stderrTail.join("\n");
  }

  /**
   * The outcome after exit. A process that died on a signal or exited non-zero without a recorded
   * failure gets one, from the tail of stderr when there is nothing better.
   */
  outcome(exit: ProcessExit, extraEvents: EventBody[] = []): StreamOutcome {
    const endedBadly = exit.signal !== null || (exit.code !== 0 && exit.code !== null);
    if (!this.failure && endedBadly && this.suspected) {
      this.failure = this.suspected;
    } else if (!this.failure && exit.signal) {
      this.failure = makeFailure(`killed by ${exit.signal}`, undefined, "agent_killed");
    } else if (!this.failure && exit.code !== 0 && exit.code !== null) {
      this.failure = makeFailure(this.lastStderr || `exited with code ${exit.code}`);
    }
    const events = [
      ...extraEvents,
      ...this.tools.closeAll(exit.signal ? `killed by ${exit.signal}` : "the agent exited"),
    ];
    const usage = definedOnly(this.usage);
    return {
      ...(this.nativeReport !== undefined ? { nativeReport: this.nativeReport } : {}),
      ...(this.finalText !== undefined ? { finalText: this.finalText } : {}),
      ...(Object.keys(usage).length > 0 ? { usage } : {}),
      ...(this.findings.length > 0 ? { findings: this.findings } : {}),
      ...(this.failure ? { failure: { ...this.failure, announced: this.wasAnnounced(this.failure) } } : {}),
      ...(this.session ? { session: this.session } : {}),
      ...(events.length > 0 ? { events } : {}),
    };
  }
}

function definedOnly<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/**
 * A translator built on a StreamState: stderr is kept to explain a failure, and the outcome after exit
 * is the state's. Adapters write `stdout`, and override the rest where their CLI says more.
 */
export abstract class StateTranslator implements StreamTranslator {
  protected readonly state = new StreamState();

  abstract stdout(line: string): TranslatedEvents;

  stderr(line: string): TranslatedEvents {
    this.state.noteStderr(line);
    return [];
  }

  async finish(exit: ProcessExit): Promise<StreamOutcome> {
    return this.state.outcome(exit);
  }
}
