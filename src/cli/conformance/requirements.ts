/**
 * The requirements `caesar conformance` checks, in the order the scorecard lists them. `core` is what
 * every OACP agent must do; `extended` adds what a good citizen does (events, the question channel, a
 * full report). docs/conformance.md lists the same, one line each.
 */

export const LEVELS = ["core", "extended"] as const;
export type Level = (typeof LEVELS)[number];

/** What the kit drives: a program speaking OACP through its files, or an agent CLI behind caesar's adapter. */
export type SubjectKind = "program" | "cli";

export interface Requirement {
  readonly id: string;
  readonly level: Level;
  /** What the agent must do, one line. */
  readonly title: string;
  /** The part of the protocol it tests. */
  readonly field: string;
  /** Where to read about it (a path from the package root, with its section). */
  readonly doc: string;
}

const PROTOCOL = "docs/protocol.md";

export const REQUIREMENTS: readonly Requirement[] = [
  {
    id: "task-file",
    level: "core",
    title: "reads its task (task.json at $CAESAR_TASK_FILE) and acts on the objective",
    field: "CAESAR_TASK_FILE, task.json objective",
    doc: `${PROTOCOL}#taskjson--caesartaskv1`,
  },
  {
    id: "report",
    level: "core",
    title: "writes a valid caesar.report/v1 at $CAESAR_REPORT_PATH",
    field: "CAESAR_REPORT_PATH, report.json protocol/status/summary",
    doc: `${PROTOCOL}#reportjson--caesarreportv1`,
  },
  {
    id: "exit-status",
    level: "core",
    title: "exits 0 when it reports success, and not 0 when it reports failed",
    field: "process exit status, report.json status",
    doc: `${PROTOCOL}#exit-status-and-deadlines`,
  },
  {
    id: "read-only",
    level: "core",
    title: "changes no file of the workspace in read-only mode",
    field: "task.json mode",
    doc: `${PROTOCOL}#taskjson--caesartaskv1`,
  },
  {
    id: "deadline",
    level: "core",
    title: "stops on SIGTERM within the grace when its deadline passes",
    field: "task.json deadline_ms, SIGTERM",
    doc: `${PROTOCOL}#exit-status-and-deadlines`,
  },
  {
    id: "changes",
    level: "core",
    title: "declares only changes git confirms",
    field: "report.json changes",
    doc: "docs/engine.md#reconciliation-the-diff-is-the-truth",
  },
  {
    id: "unknown-field",
    level: "core",
    title: "works the same when task.json holds a member it does not know",
    field: "task.json (unknown members)",
    doc: `${PROTOCOL}#how-strictly-caesar-reads`,
  },
  {
    id: "full-report",
    level: "extended",
    title: "reports in full: its task_id and the changes it made",
    field: "report.json task_id, changes",
    doc: `${PROTOCOL}#reportjson--caesarreportv1`,
  },
  {
    id: "events",
    level: "extended",
    title: "narrates its work in valid events at $CAESAR_EVENTS_PATH",
    field: "CAESAR_EVENTS_PATH, events.jsonl (caesar.event/v1)",
    doc: `${PROTOCOL}#eventsjsonl--caesareventv1`,
  },
  {
    id: "question",
    level: "extended",
    title: "asks a question through the return channel and uses the answer",
    field: "questions/<id>.json, answers/<id>.json (or ask_orchestrator)",
    doc: `${PROTOCOL}#questions-and-answers`,
  },
];

/** The requirements a level asks for: core's, and extended's on top of them. */
export function requirementsOf(level: Level): Requirement[] {
  return REQUIREMENTS.filter((requirement) => level === "extended" || requirement.level === "core");
}
