import { type Finding, type Report, ReportSchema } from "../../protocol/report.js";
import { PROTOCOLS } from "../../protocol/versions.js";
import { formatDuration } from "../../support/duration.js";
import { type ErrorCode, errnoOf, isCaesarError, messageOf } from "../../support/errors.js";
import type { Outcome } from "../store/state.js";

/**
 * How a task ended, in words — built in this one place for every path (the agent could not start, its
 * setup failed, it timed out, was cancelled, crashed, exited without a report, or its conductor died), so
 * that the `error` event, `state.error`, a synthesised report and the findings all say the same thing.
 * Reason first, then what the agent last printed (as execa's messages do).
 */

export interface ExitStatus {
  code: number | null;
  signal: string | null;
}

/** What the agent's stream said went wrong, and whether it already wrote an `error` event saying so. */
export interface StreamFailure {
  message: string;
  code?: ErrorCode | undefined;
  announced?: boolean | undefined;
}

export type EndingCause =
  /** The agent ran and its process ended (on its own, or stopped by caesar). */
  | {
      kind: "exited";
      exit: ExitStatus;
      stoppedFor?: "timed_out" | "cancelled" | "over_budget" | undefined;
      /** Why it was stopped for its tree's budget (stoppedFor "over_budget"). */
      overBudget?: { code: ErrorCode; message: string } | undefined;
      streamFailure?: StreamFailure | undefined;
      /**
       * How the run went when the agent's session says it better than its exit status: an ACP agent is a
       * server caesar ends itself once the session is over, so its exit (SIGTERM) says nothing of the work.
       */
      processOutcome?: "succeeded" | "failed" | undefined;
    }
  | { kind: "spawn_failed"; bin: string; error: unknown }
  | { kind: "setup_failed"; command: string; exit: ExitStatus }
  | { kind: "cancelled_before_start" }
  /** Finished by another command: the conductor is gone. */
  | {
      kind: "abandoned";
      by: string;
      conductorPid: number | null;
      agentPid: number | null;
      cancelled: boolean;
      /** Why it could not be taken over instead (said after who is gone). */
      why?: string;
      /** Whether its agent still ran and was stopped (false: it had ended by itself). */
      agentStopped?: boolean;
    }
  /** The conductor itself failed (git, the file system, a bug). */
  | { kind: "crashed"; error: unknown; agentRan?: boolean }
  /**
   * A remote task ended on the submitter's machine, not by its worker's conductor: its starting point
   * could not be pushed, it was cancelled in the queue, its workers were lost, or a cancel went
   * unconfirmed. The reason is the cluster's (docs/cluster.md).
   */
  | { kind: "remote"; code: ErrorCode; message: string; outcome: Outcome; agentRan: boolean };

export interface EndingContext {
  agent: string;
  /** The agent's command line as shown to people, once it was built. */
  command?: string | null | undefined;
  timeoutMs: number;
  /** Who asked for the cancel, when one was asked. */
  cancelledBy?: string | null | undefined;
  /** How long the agent ran, when it did. */
  ranMs?: number | undefined;
  /** The last lines the agent (or the failing setup command) wrote on stderr, or on both streams. */
  outputTail: string;
}

export interface Ending {
  outcome: Outcome;
  exit: ExitStatus;
  /** One line, reason first: the summary of a synthesised report, the title of a finding. */
  headline: string;
  /** The failure for `state.error` and the `error` event; absent when the process ended well. */
  error?: { code: ErrorCode; message: string };
  /** The agent's stream already wrote an `error` event for this very failure: no second one. */
  announced: boolean;
  /** Did the agent run at all? */
  agentRan: boolean;
  /** The agent's last output, as given (for a synthesised report's details). */
  outputTail: string;
  /** The agent's command line as shown to people, when it was built. */
  command: string | null;
}

/** The `error` event and state.error message: headline, command, then the agent's last lines. */
const MAX_MESSAGE_CHARS = 4000;

export function describeEnding(cause: EndingCause, context: EndingContext): Ending {
  const agent = `Agent "${context.agent}"`;
  switch (cause.kind) {
    case "exited":
      return describeExit(cause, context, agent);
    case "spawn_failed": {
      const missing = errnoOf(cause.error) === "ENOENT";
      const headline = missing
        ? `${agent} could not start: ${cause.bin} was not found (is it installed and on PATH?)`
        : `${agent} could not start: ${messageOf(cause.error)}`;
      return failure(context, { headline, agentRan: false }, missing ? "agent_not_found" : "spawn_failed");
    }
    case "setup_failed":
      return failure(
        { ...context, command: null },
        {
          headline: `Setup command \`${cause.command}\` ${describeStatus(cause.exit)}, so the agent did not run; fix [worktree] setup in .caesar/config.toml`,
          agentRan: false,
          exit: cause.exit,
        },
        "setup_failed",
      );
    case "cancelled_before_start":
      return failure(
        { ...context, command: null },
        {
          headline: `Cancelled before the agent started${byWhom(context)}`,
          agentRan: false,
          outcome: "cancelled",
        },
        "cancelled",
      );
    case "abandoned": {
      const who =
        cause.conductorPid !== null
          ? `its conductor (pid ${cause.conductorPid}) is gone`
          : "no conductor ever took it";
      const why = cause.why ? ` while ${cause.why}` : "";
      const stopped =
        cause.agentPid === null
          ? ""
          : cause.agentStopped === false
            ? `; its agent (pid ${cause.agentPid}) had already ended`
            : `; its agent (pid ${cause.agentPid}) was stopped`;
      const by = cause.by === "service" ? "the conductor service" : `\`caesar ${cause.by}\``;
      return failure(
        context,
        {
          headline: `The task was finished by ${by}: ${who}${why}${stopped}`,
          agentRan: cause.agentPid !== null,
          outcome: cause.cancelled ? "cancelled" : "failed",
        },
        "conductor_died",
      );
    }
    case "remote":
      return failure(
        { ...context, command: null },
        { headline: cause.message, agentRan: cause.agentRan, outcome: cause.outcome },
        cause.code,
      );
    case "crashed": {
      // A caesar error keeps its code; any other (a Node error's ENOSPC, a bug) is the conductor's error,
      // its own words in the message: state.error.code is always a code of the catalogue.
      const caesar = isCaesarError(cause.error) ? cause.error : undefined;
      const detail = caesar?.detail ? ` ${caesar.detail}` : "";
      return failure(
        context,
        {
          headline: `The task could not ${cause.agentRan ? "go on" : "run"}: ${messageOf(cause.error)}${detail}`,
          agentRan: cause.agentRan ?? false,
        },
        caesar?.code ?? "conductor_error",
      );
    }
  }
}

function describeExit(
  cause: Extract<EndingCause, { kind: "exited" }>,
  context: EndingContext,
  agent: string,
): Ending {
  const { exit, stoppedFor, streamFailure } = cause;
  const ran = { agentRan: true, exit };
  if (stoppedFor === "timed_out") {
    // A "killed by SIGTERM" from the stream is the stop itself, not a cause.
    const cause = streamFailure?.code === "agent_killed" ? undefined : streamFailure;
    const likely = cause ? `; likely cause: ${cause.message}` : "";
    const headline = `${agent} timed out after ${formatDuration(context.timeoutMs)} and was stopped${likely}`;
    return failure(context, { ...ran, headline, outcome: "timed_out" }, "timed_out");
  }
  if (stoppedFor === "over_budget") {
    const why = cause.overBudget ?? {
      code: "budget_actions" as const,
      message: "its tree's budget is spent",
    };
    const headline = `${agent} was stopped: ${why.message}`;
    return failure(context, { ...ran, headline, outcome: "failed" }, why.code);
  }
  if (stoppedFor === "cancelled") {
    const after = context.ranMs === undefined ? "" : ` after ${formatDuration(context.ranMs)}`;
    const headline = `${agent} was cancelled${after}${byWhom(context)}`;
    return failure(context, { ...ran, headline, outcome: "cancelled" }, "cancelled");
  }
  const judged = cause.processOutcome;
  const endedBadly =
    judged !== undefined
      ? judged === "failed"
      : exit.signal !== null || (exit.code !== 0 && exit.code !== null);
  const outcome: Outcome = judged ?? (exit.code === 0 ? "succeeded" : "failed");
  if (!endedBadly && !streamFailure) {
    return {
      ...ran,
      outcome,
      headline: judged ? `${agent} ended its session` : `${agent} exited 0`,
      announced: false,
      outputTail: context.outputTail,
      command: context.command ?? null,
    };
  }
  // The stream's words say why (a 401, a quota); else the last line the agent printed.
  const why = streamFailure?.message ?? lastLine(context.outputTail);
  const status = judged
    ? endedBadly
      ? "ended its session without finishing its turn"
      : "ended its session but reported a failure"
    : endedBadly
      ? describeStatus(exit)
      : "exited 0 but reported a failure";
  const headline = `${agent} ${status}${why ? `: ${why}` : ""}`;
  const code = streamFailure?.code ?? (exit.signal && !judged ? "agent_killed" : "agent_failed");
  return {
    ...failure(context, { ...ran, headline, outcome }, code),
    announced: streamFailure?.announced === true,
  };
}

/** An ending with a failure: the error's message is the headline, the command, then the last output. */
function failure(
  context: EndingContext,
  parts: { headline: string; agentRan: boolean; outcome?: Outcome; exit?: ExitStatus },
  code: ErrorCode,
): Ending {
  const command = context.command ?? null;
  const lines = [
    parts.headline,
    ...(command ? [`command: ${command}`] : []),
    ...(context.outputTail ? ["last output:", context.outputTail] : []),
  ];
  return {
    outcome: parts.outcome ?? "failed",
    exit: parts.exit ?? { code: null, signal: null },
    headline: parts.headline,
    error: { code, message: bound(lines.join("\n")) },
    announced: false,
    agentRan: parts.agentRan,
    outputTail: context.outputTail,
    command,
  };
}

/** "exited with code 3", "was killed by SIGKILL". */
export function describeStatus(exit: ExitStatus): string {
  if (exit.signal) return `was killed by ${exit.signal}`;
  return `exited with code ${exit.code ?? "?"}`;
}

function byWhom(context: EndingContext): string {
  return context.cancelledBy ? ` (cancel requested by ${context.cancelledBy})` : "";
}

function lastLine(tail: string): string | undefined {
  const line = tail.trim().split("\n").at(-1)?.trim();
  return line ? line : undefined;
}

/** Keep the head (the reason) and the end (the last output) of a message that is too long. */
function bound(message: string): string {
  if (message.length <= MAX_MESSAGE_CHARS) return message;
  const head = message.indexOf("\n");
  const first = head === -1 ? message.slice(0, 500) : message.slice(0, Math.min(head, 1000));
  return `${first}\n…\n${message.slice(-(MAX_MESSAGE_CHARS - first.length - 3))}`;
}

/**
 * The report caesar writes when the agent left none: from the ending (how the process ended, its last
 * output in raw.log) and the diff (how many files git saw change). It never claims success: an agent that
 * exited 0 without a report is `partial`; anything else is `failed`.
 */
export function synthesizeReport(ending: Ending, changedFiles: number | undefined): Report {
  const files = changedFiles === undefined ? "" : ` ${changedFiles} file(s) changed according to git.`;
  const summary = ending.error
    ? `${sentence(ending.headline)}${files}`
    : `The agent exited 0 without a report.${files}`;
  const exited = ending.exit.code !== null || ending.exit.signal !== null;
  const details = [
    ending.agentRan ? (exited ? `The agent ${describeStatus(ending.exit)}.` : "") : "The agent did not run.",
    ...(ending.command ? [`Command: ${ending.command}`] : []),
    ...(ending.outputTail ? ["Last output:", ending.outputTail] : []),
  ]
    .filter((line) => line !== "")
    .join("\n");
  // Every other member takes the schema's default.
  return ReportSchema.parse({
    protocol: PROTOCOLS.report,
    status: ending.error ? "failed" : "partial",
    summary,
    details,
  });
}

/** What the ending says that a report the agent did write does not (a timeout, a crash after "success"). */
export function endingFindings(ending: Ending, report: Report): Finding[] {
  if (!ending.error) return [];
  const detail = ending.outputTail ? { detail: ending.outputTail } : {};
  if (ending.outcome === "timed_out") return [{ severity: "high", title: ending.headline, ...detail }];
  if (ending.outcome === "cancelled") return [{ severity: "medium", title: ending.headline, ...detail }];
  if (report.status === "success")
    return [
      { severity: "high", title: `The report says success, but ${lowerFirst(ending.headline)}`, ...detail },
    ];
  return [{ severity: "medium", title: ending.headline, ...detail }];
}

function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
