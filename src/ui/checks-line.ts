import { checksVerdict } from "../protocol/checks.js";
import type { NormalizedReport } from "../protocol/report.js";
import type { Role, Theme } from "./theme.js";

/**
 * A task's checks in a few words, for every place that shows its status: `2/2 checks passed`,
 * `1/2 checks passed`, or nothing when the task had none. With the attempts it took, when more than one.
 */
export function checksText(report: Pick<NormalizedReport, "checks" | "attempts"> | null | undefined): string {
  const verdict = checksVerdict(report?.checks);
  if (verdict.state === "none") return "";
  const tries = report?.attempts.length ?? 0;
  const after = tries > 1 ? ` after ${tries} attempts` : "";
  return `${verdict.passed}/${verdict.total} checks passed${after}`;
}

/** The same, marked and coloured: ✓ when every check passed, ✗ when one failed. */
export function paintChecks(
  theme: Theme,
  report: Pick<NormalizedReport, "checks" | "attempts"> | null | undefined,
): string {
  const text = checksText(report);
  if (text === "") return "";
  const role: Role = checksVerdict(report?.checks).state === "passed" ? "ok" : "fail";
  const mark = role === "ok" ? theme.marks.ok : theme.marks.fail;
  return theme.paint(role, `${mark} ${text}`);
}
