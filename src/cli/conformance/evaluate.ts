import { KILL_GRACE_MS } from "../../engine/conductor/terminate.js";
import { type Level, type Requirement, requirementsOf, type SubjectKind } from "./requirements.js";
import type { Evidence } from "./run-scenario.js";
import type { ScenarioName } from "./scenarios.js";

export type Verdict = "pass" | "fail" | "skip";

/** One line of the scorecard. */
export interface RequirementResult {
  id: string;
  level: Level;
  title: string;
  field: string;
  doc: string;
  verdict: Verdict;
  /** What the requirement expected (on a failure). */
  expected?: string;
  /** What the agent did. */
  observed?: string;
  /** On a pass, what was not exercised; on a skip, why it was not checked. */
  note?: string;
  /** The tasks it was judged from. */
  tasks: string[];
}

type Outcome = Pick<RequirementResult, "verdict" | "expected" | "observed" | "note">;
type Runs = Partial<Record<ScenarioName, Evidence>>;

/** Report tiers that are the protocol speaking (not caesar guessing from output). */
const PROTOCOL_TIERS = new Set(["channel", "native", "file"]);

const passing = (note?: string): Outcome => ({ verdict: "pass", ...(note ? { note } : {}) });
const failing = (expected: string, observed: string): Outcome => ({ verdict: "fail", expected, observed });
const skipped = (why: string): Outcome => ({ verdict: "skip", note: why });

/** What the judges need to know of the agent: a program or a CLI, and whether caesar ends its sessions. */
export interface SubjectTraits {
  kind: SubjectKind;
  /** An ACP agent: caesar ends its session itself (stdin closed, then its group), whatever it reports. */
  session: boolean;
}

interface Judge {
  scenarios: ScenarioName[];
  judge(runs: Runs, subject: SubjectTraits): Outcome;
}

const JUDGES: Record<string, Judge> = {
  "task-file": {
    scenarios: ["basic"],
    judge: ({ basic }, { kind }) => {
      if (!basic) return skipped("the basic scenario did not run");
      const token = tokenOf(basic);
      if (kind === "cli") {
        return basic.modelRequests.some((body) => body.includes(token))
          ? passing("the objective reached the model through the CLI")
          : failing(`the objective (with ${token}) in what the CLI sends its model`, "no request carried it");
      }
      if (!hasProtocolReport(basic)) {
        if (Object.values(basic.changed).some((content) => content.includes(token))) return passing();
        return skipped("needs a report to see what the agent understood (see report)");
      }
      if (mentions(basic, token)) return passing();
      return failing(
        `the report or the workspace to show the objective's token ${token}`,
        `report: ${JSON.stringify(basic.state.report?.summary ?? "")}; files changed: ${Object.keys(basic.changed).join(", ") || "none"}`,
      );
    },
  },
  report: {
    scenarios: ["basic"],
    judge: ({ basic }) => {
      if (!basic) return skipped("the basic scenario did not run");
      const file = basic.reportFile;
      if (file.present && !file.valid)
        return failing(
          "report.json to be a valid caesar.report/v1",
          `report.json: ${file.problems.join("; ")}`,
        );
      const source = basic.state.report?.report_source ?? "none";
      if (PROTOCOL_TIERS.has(source))
        return passing(source === "file" ? undefined : `the report came through the ${source} tier`);
      if (source === "synthesized")
        return failing(
          "a caesar.report/v1 at $CAESAR_REPORT_PATH",
          `no report: caesar synthesised one (exit ${describeExit(basic)})`,
        );
      return failing(
        "a caesar.report/v1 at $CAESAR_REPORT_PATH",
        `only a ${source} report in the output (degraded tier)`,
      );
    },
  },
  "exit-status": {
    scenarios: ["basic", "failure"],
    judge: ({ basic, failure }, { kind, session }) => {
      if (session)
        return skipped("caesar ends an ACP agent's session itself: its exit status is caesar's doing");
      const checked: string[] = [];
      for (const run of [basic, failure]) {
        if (!run || !hasProtocolReport(run)) continue;
        const status = run.state.report?.status;
        const code = run.state.exit?.code ?? null;
        if (status === "success" && code !== 0)
          return failing(
            `exit 0 with a success report (${run.plan.name})`,
            `exit ${describeExit(run)} with success`,
          );
        if (status === "failed" && code === 0 && kind === "program")
          return failing(`a non-zero exit with a failed report (${run.plan.name})`, "exit 0 with failed");
        checked.push(`${run.plan.name}: ${status}, exit ${describeExit(run)}`);
      }
      if (checked.length === 0) return skipped("needs a report to compare the exit status with (see report)");
      const note =
        kind === "cli"
          ? "a CLI's exit status is its own run's, not its model's report: only success is held to 0"
          : undefined;
      return passing([checked.join("; "), note].filter(Boolean).join(". "));
    },
  },
  "read-only": {
    scenarios: ["read-only"],
    judge: ({ "read-only": run }) => {
      if (!run) return skipped("the read-only scenario did not run");
      const report = run.state.report;
      if (report?.changes_verified_by !== "git") return skipped("git could not tell what changed");
      if (report.changes.length === 0) return passing();
      return failing(
        "no file of the workspace changed (task.json mode: read-only)",
        `git saw ${report.changes.map((change) => `${change.action} ${change.path}`).join(", ")}`,
      );
    },
  },
  deadline: {
    scenarios: ["deadline"],
    judge: ({ deadline }) => {
      if (!deadline) return skipped("the deadline scenario did not run");
      const timeout = deadline.plan.request.timeout;
      if (deadline.state.exit?.signal === "SIGKILL")
        return failing(
          `to stop within ${GRACE} of SIGTERM at the deadline (${timeout})`,
          `still running ${GRACE} after SIGTERM: caesar killed it (SIGKILL)`,
        );
      if (deadline.state.outcome !== "timed_out")
        return passing(`it ended before the deadline (${timeout}): SIGTERM was not exercised`);
      return passing(`stopped after SIGTERM (${describeExit(deadline)})`);
    },
  },
  changes: {
    scenarios: ["basic"],
    judge: ({ basic }) => {
      if (!basic) return skipped("the basic scenario did not run");
      if (!hasProtocolReport(basic))
        return skipped("needs a report to read its declared changes (see report)");
      const report = basic.state.report!;
      if (report.changes_verified_by !== "git") return skipped("git could not tell what changed");
      const disagreements = report.findings.filter((finding) => DISAGREEMENT.test(finding.title));
      if (disagreements.length > 0)
        return failing(
          "the declared changes to be what git saw",
          disagreements.map((finding) => `${finding.title}: ${finding.detail ?? ""}`.trim()).join("; "),
        );
      const undeclared = report.findings.find((finding) =>
        /^The report declares no changes/.test(finding.title),
      );
      return passing(
        undeclared ? "it declares no changes (git saw some): nothing declared is false" : undefined,
      );
    },
  },
  "unknown-field": {
    scenarios: ["basic", "unknown-field"],
    judge: ({ basic, "unknown-field": probed }, { kind }) => {
      if (kind === "cli") return skipped("a CLI never reads task.json: caesar's adapter gives it the brief");
      if (!basic || !probed) return skipped("the scenario did not run");
      if (!hasProtocolReport(basic) || basic.state.exit?.code !== 0)
        return skipped("needs the basic scenario to pass first (see report and exit-status)");
      if (
        probed.state.exit?.code !== 0 ||
        !hasProtocolReport(probed) ||
        probed.state.report?.status !== basic.state.report?.status
      )
        return failing(
          `the same outcome as without the unknown member (exit 0, a ${basic.state.report?.status} report)`,
          `exit ${describeExit(probed)}, report ${probed.state.report?.report_source ?? "none"} ${probed.state.report?.status ?? ""}`.trim(),
        );
      return passing();
    },
  },
  "full-report": {
    scenarios: ["basic"],
    judge: ({ basic }) => {
      if (!basic) return skipped("the basic scenario did not run");
      if (!hasProtocolReport(basic)) return skipped("needs a report (see report)");
      if (basic.state.report?.report_source === "native")
        return passing("the CLI's structured output: caesar's schema asks for every member");
      const raw = basic.reportFile.present ? (basic.reportFile.raw as Record<string, unknown>) : undefined;
      if (!raw) return passing(`the report came through the ${basic.state.report?.report_source} tier`);
      const missing: string[] = [];
      if (raw.task_id !== basic.taskId)
        missing.push(`task_id ${JSON.stringify(raw.task_id ?? null)} (expected ${basic.taskId})`);
      if (!Array.isArray(raw.changes) || raw.changes.length === 0) missing.push("no changes declared");
      return missing.length === 0
        ? passing()
        : failing("task_id (the task's id) and the changes made", missing.join("; "));
    },
  },
  events: {
    scenarios: ["basic"],
    judge: ({ basic }) => {
      if (!basic) return skipped("the basic scenario did not run");
      const { problems, agentEvents } = basic.events;
      if (problems.length > 0)
        return failing("every line of events.jsonl a valid caesar.event/v1", problems.join("; "));
      const foreign = agentEvents.filter((event) => event.task_id !== basic.taskId);
      if (foreign.length > 0)
        return failing(
          `task_id ${basic.taskId} on every event`,
          `${foreign.length} event(s) with another task_id`,
        );
      if (agentEvents.length === 0)
        return failing("at least one event appended at $CAESAR_EVENTS_PATH while it works", "no event");
      const types = [...new Set(agentEvents.map((event) => String(event.type)))];
      return passing(`${agentEvents.length} event(s): ${types.join(", ")}`);
    },
  },
  question: {
    scenarios: ["question"],
    judge: ({ question }) => {
      if (!question) return skipped("the question scenario did not run");
      const answer = question.plan.answer ?? "";
      if (question.answered.length === 0)
        return failing("a question (questions/<id>.json, or ask_orchestrator)", "it asked nothing");
      if (mentions(question, answer)) return passing();
      return failing(`the answer (${answer}) used in its work or its report`, "the answer appears nowhere");
    },
  },
};

/** How long an agent has between SIGTERM and SIGKILL. */
const GRACE = `${KILL_GRACE_MS / 1000} s`;

/** The reconciliation findings that say the declaration and git disagree (engine/conductor/reconcile.ts). */
const DISAGREEMENT = /declared change\(s\) (not found|contradicted) by git|found by git but not declared/;

/** Judge every requirement of `level` from the scenarios' evidence. */
export function judge(
  evidence: readonly Evidence[],
  level: Level,
  subject: SubjectTraits,
): RequirementResult[] {
  const runs: Runs = Object.fromEntries(evidence.map((run) => [run.plan.name, run]));
  return requirementsOf(level).map((requirement) => resultOf(requirement, runs, subject));
}

/** The scenarios a level needs. */
export function scenariosFor(level: Level): Set<ScenarioName> {
  return new Set(requirementsOf(level).flatMap((requirement) => JUDGES[requirement.id]!.scenarios));
}

function resultOf(requirement: Requirement, runs: Runs, subject: SubjectTraits): RequirementResult {
  const judgeOf = JUDGES[requirement.id]!;
  const outcome = judgeOf.judge(runs, subject);
  const tasks = judgeOf.scenarios.flatMap((name) => (runs[name] ? [runs[name].taskId] : []));
  return { ...requirement, ...outcome, tasks };
}

/** The objective's token: the one random word every scenario's objective carries. */
function tokenOf(run: Evidence): string {
  return /c[0-9a-f]{10}/.exec(String(run.plan.request.objective))?.[0] ?? "";
}

/** Does the report (as caesar normalised it) or a changed file carry this text? */
function mentions(run: Evidence, text: string): boolean {
  if (text === "") return false;
  if (JSON.stringify(run.state.report ?? {}).includes(text)) return true;
  return Object.values(run.changed).some((content) => content.includes(text));
}

function hasProtocolReport(run: Evidence): boolean {
  return PROTOCOL_TIERS.has(run.state.report?.report_source ?? "none");
}

function describeExit(run: Evidence): string {
  const exit = run.state.exit;
  if (!exit) return "unknown";
  return exit.signal ? `by ${exit.signal}` : String(exit.code);
}
