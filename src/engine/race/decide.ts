import type { ContenderRow } from "../follow/compare-tasks.js";
import type { RaceClaim, RaceRecord } from "../store/race-record.js";

/** One contender in the decision, best first, with why it stands where it does. */
export interface RankedContender {
  rank: number;
  task_id: string;
  agent: string;
  phase: string;
  outcome: string | null;
  status: string | null;
  checks_passed: number;
  checks_total: number;
  /** Lines changed (insertions + deletions), null when the diff could not be measured. */
  diff_lines: number | null;
  duration_ms: number | null;
  why: string;
}

export interface RaceDecision {
  mode: RaceRecord["mode"];
  /** pending: no winner yet, contenders still running; decided: a winner; no_winner: all ended, none won. */
  state: "pending" | "decided" | "no_winner";
  winner: string | null;
  reason: string;
  ranking: RankedContender[];
}

/**
 * Decide a race from its contenders' records. `first`: the winner is the first contender whose checks
 * all passed (the one that claimed the race, else the earliest to finish); `best`: once all have
 * finished, contenders are ranked by checks passed, then the smaller diff, then time, and the first wins
 * if it passed every check. A race without checks has no evidence to decide on.
 */
export function decideRace(record: RaceRecord, rows: ContenderRow[], claim?: RaceClaim): RaceDecision {
  const finished = rows.filter((row) => row.phase === "finished");
  const passers = finished
    .filter((row) => row.checks.state === "passed")
    .sort((a, b) => time(a.finished_at) - time(b.finished_at));
  const allDone = finished.length === rows.length;
  if (record.checks.length === 0) {
    return {
      mode: record.mode,
      state: allDone ? "no_winner" : "pending",
      winner: null,
      reason:
        "This race has no checks: there is no evidence to decide on. Compare the contenders and pick one.",
      ranking: rank(rows, undefined, record),
    };
  }
  if (record.mode === "first") {
    const claimed = claim && passers.find((row) => row.task_id === claim.task_id);
    const winner = claimed ?? passers[0];
    if (winner) {
      const others = rows.filter((row) => row.task_id !== winner.task_id);
      const cancelled = others.filter((row) => row.outcome === "cancelled").length;
      return {
        mode: "first",
        state: "decided",
        winner: winner.task_id,
        reason: `${winner.task_id} (${winner.agent}) was the first to pass all ${winner.checks.total} check(s)${winner.duration_ms === null ? "" : `, after ${seconds(winner.duration_ms)}`}${cancelled > 0 ? `; ${cancelled} other contender(s) were cancelled (their worktrees and diffs are kept)` : ""}.`,
        ranking: rank(rows, winner, record),
      };
    }
    return {
      mode: "first",
      state: allDone ? "no_winner" : "pending",
      winner: null,
      reason: allDone
        ? "No contender passed all its checks."
        : `No contender has passed all its checks yet; ${rows.length - finished.length} still running.`,
      ranking: rank(rows, undefined, record),
    };
  }
  if (!allDone) {
    return {
      mode: "best",
      state: "pending",
      winner: null,
      reason: `${rows.length - finished.length} of ${rows.length} contender(s) still running: the best is chosen once all have finished.`,
      ranking: rank(rows, undefined, record),
    };
  }
  const ranking = rank(rows, undefined, record);
  const top = ranking[0];
  const best = top && top.checks_total > 0 && top.checks_passed === top.checks_total ? top : undefined;
  return {
    mode: "best",
    state: best ? "decided" : "no_winner",
    winner: best?.task_id ?? null,
    reason: best
      ? `${best.task_id} (${best.agent}) ranks first: ${best.checks_passed}/${best.checks_total} checks passed${best.diff_lines === null ? "" : `, ${best.diff_lines} line(s) changed`}${best.duration_ms === null ? "" : `, ${seconds(best.duration_ms)}`} (ranked by checks passed, then the smaller diff, then time).`
      : `No contender passed all its checks; the best passed ${top?.checks_passed ?? 0}/${top?.checks_total ?? 0}.`,
    ranking: ranking.map((entry) =>
      best && entry.task_id === best.task_id ? { ...entry, why: `winner: ${entry.why}` } : entry,
    ),
  };
}

/** Checks passed (more first), then the diff (smaller first), then time (shorter first), then the order asked. */
function rank(rows: ContenderRow[], winner: ContenderRow | undefined, record: RaceRecord): RankedContender[] {
  const entries = rows.map((row, order) => ({ row, order, lines: linesOf(row) }));
  entries.sort((a, b) => {
    if (winner) {
      if (a.row.task_id === winner.task_id) return -1;
      if (b.row.task_id === winner.task_id) return 1;
    }
    return (
      b.row.checks.passed - a.row.checks.passed ||
      // At equal evidence, one that ran to its end before one cancelled or stopped at its deadline.
      Number(ranToEnd(b.row)) - Number(ranToEnd(a.row)) ||
      (a.lines ?? Number.MAX_SAFE_INTEGER) - (b.lines ?? Number.MAX_SAFE_INTEGER) ||
      (a.row.duration_ms ?? Number.MAX_SAFE_INTEGER) - (b.row.duration_ms ?? Number.MAX_SAFE_INTEGER) ||
      a.order - b.order
    );
  });
  return entries.map(({ row, lines }, index) => ({
    rank: index + 1,
    task_id: row.task_id,
    agent: row.agent,
    phase: row.phase,
    outcome: row.outcome,
    status: row.status,
    checks_passed: row.checks.passed,
    checks_total: row.checks.total === 0 ? record.checks.length : row.checks.total,
    diff_lines: lines,
    duration_ms: row.duration_ms,
    why: whyOf(row, winner, lines),
  }));
}

function whyOf(row: ContenderRow, winner: ContenderRow | undefined, lines: number | null): string {
  if (winner && row.task_id === winner.task_id) return "winner: the first to pass every check";
  if (row.phase !== "finished") return "still running";
  if (row.outcome === "cancelled") return winner ? `cancelled: ${winner.task_id} won first` : "cancelled";
  const size = lines === null ? "" : `, ${lines} line(s) changed`;
  const time = row.duration_ms === null ? "" : `, ${seconds(row.duration_ms)}`;
  if (row.checks.state === "passed")
    return `passed ${row.checks.passed}/${row.checks.total} checks${size}${time}`;
  const failed = row.failed_checks.length > 0 ? ` (failed: ${row.failed_checks.join(", ")})` : "";
  return `passed ${row.checks.passed}/${row.checks.total} checks${failed}${size}${time}`;
}

function linesOf(row: ContenderRow): number | null {
  return row.diff ? row.diff.insertions + row.diff.deletions : null;
}

function time(iso: string | null): number {
  return iso ? Date.parse(iso) : Number.MAX_SAFE_INTEGER;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/** Did the contender run to its own end (not cancelled, not stopped at its deadline, not running)? */
function ranToEnd(row: ContenderRow): boolean {
  return row.phase === "finished" && row.outcome !== "cancelled" && row.outcome !== "timed_out";
}
