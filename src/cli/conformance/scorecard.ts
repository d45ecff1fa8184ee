import type { RequirementResult } from "./evaluate.js";
import { LEVELS, type Level, type SubjectKind } from "./requirements.js";
import type { Evidence } from "./run-scenario.js";

/** `caesar conformance --json`: the scorecard, for CI. */
export interface Scorecard {
  agent: string;
  kind: SubjectKind;
  /** The level asked for; `passed` says whether the agent meets it. */
  level: Level;
  passed: boolean;
  /** Each level judged: passed, and the ids of the requirements that failed. */
  levels: Partial<Record<Level, { passed: boolean; failed: string[] }>>;
  requirements: RequirementResult[];
  scenarios: {
    name: string;
    task_id: string;
    outcome: string | null;
    exit: string;
    report_source: string | null;
  }[];
  /** The throwaway repository, when kept (--keep). */
  repo: string | null;
}

export function makeScorecard(input: {
  agent: string;
  kind: SubjectKind;
  level: Level;
  results: RequirementResult[];
  evidence: readonly Evidence[];
  repo: string | null;
}): Scorecard {
  const levels: Scorecard["levels"] = {};
  for (const level of LEVELS.slice(0, LEVELS.indexOf(input.level) + 1)) {
    const within = input.results.filter((result) => LEVELS.indexOf(result.level) <= LEVELS.indexOf(level));
    const failed = within.filter((result) => result.verdict === "fail").map((result) => result.id);
    levels[level] = { passed: failed.length === 0, failed };
  }
  return {
    agent: input.agent,
    kind: input.kind,
    level: input.level,
    passed: levels[input.level]?.passed ?? false,
    levels,
    requirements: input.results,
    scenarios: input.evidence.map((run) => ({
      name: run.plan.name,
      task_id: run.taskId,
      outcome: run.state.outcome,
      exit: run.state.exit ? (run.state.exit.signal ?? String(run.state.exit.code)) : "none",
      report_source: run.state.report?.report_source ?? null,
    })),
    repo: input.repo,
  };
}

const MARK: Record<RequirementResult["verdict"], string> = { pass: "PASS", fail: "FAIL", skip: "skip" };

/** The scorecard for people: a line per requirement, and for a failure what was expected and seen. */
export function renderScorecard(card: Scorecard): string {
  const lines = [
    `OACP conformance of ${card.agent} (${card.kind === "cli" ? "agent CLI, scripted model" : "program"})`,
  ];
  const width = Math.max(...card.requirements.map((result) => result.id.length));
  for (const level of LEVELS) {
    const results = card.requirements.filter((result) => result.level === level);
    if (results.length === 0) continue;
    lines.push("", `${level}:`);
    for (const result of results) {
      lines.push(`  ${MARK[result.verdict]}  ${result.id.padEnd(width)}  ${result.title}`);
      if (result.verdict === "fail") {
        lines.push(`        expected: ${result.expected}`, `        observed: ${result.observed}`);
        lines.push(`        tests:    ${result.field}`, `        read:     ${result.doc}`);
        if (result.tasks.length > 0) lines.push(`        task:     ${result.tasks.join(", ")}`);
      } else if (result.verdict === "skip") lines.push(`        not checked: ${result.note}`);
      else if (result.note) lines.push(`        ${result.note}`);
    }
  }
  lines.push("");
  for (const level of LEVELS) {
    const verdict = card.levels[level];
    if (!verdict) continue;
    lines.push(
      verdict.passed ? `OACP ${level}: passed` : `OACP ${level}: failed (${verdict.failed.join(", ")})`,
    );
  }
  if (card.repo) lines.push(`Tasks kept in ${card.repo} (caesar status <task> --root ${card.repo}).`);
  return lines.join("\n");
}
