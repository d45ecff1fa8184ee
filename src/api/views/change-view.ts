import { taskResult } from "../../engine/lifecycle/result.js";
import { isCaesarError, messageOf } from "../../support/errors.js";
import { changedFiles, diffText } from "../../workspace/changes.js";
import type { IndexedTask } from "../index/indexed-task.js";
import type { Diff, TaskDiff } from "../response-schema.js";
import { Lru } from "./lru.js";
import { changeStatusOf } from "./task-summary.js";

/** A patch longer than this is cut (and says so): a page and an agent both choke on megabytes of diff. */
export const MAX_PATCH_CHARS = 1024 * 1024;

/**
 * Changes — each task's result, numbered like pull requests — with their verified diff. A finished task's
 * diff is the one git observed when it ended (start tree → end tree): trees are content-addressed, so it is
 * cached by that pair. A running task's diff is recomputed from its workspace on each read.
 */
export class ChangeReader {
  private readonly diffs = new Lru<string, Diff>(256);

  /** `change.read`: the change, its status, its report (with findings) and its verified diff. */
  async read(task: IndexedTask) {
    const s = task.state;
    const { diff, origin, unavailable } = await this.diffOf(task);
    return {
      number: s.change_number,
      taskId: s.id,
      title: s.objective.split("\n")[0]!.slice(0, 200),
      objective: s.objective,
      status: changeStatusOf(s),
      agent: s.agent,
      role: s.role,
      mode: s.mode,
      isolation: s.isolation,
      phase: s.phase,
      outcome: s.outcome,
      reportStatus: s.report_status,
      createdAt: s.created_at,
      startedAt: s.started_at,
      finishedAt: s.finished_at,
      branch: s.branch,
      baseRef: s.base_ref,
      resultCommit: s.result_commit,
      applied: s.applied,
      error: s.error,
      report: s.report,
      findings: s.report?.findings ?? [],
      diff: diff ? { verifiedBy: "git" as const, origin, ...diff } : null,
      diffUnavailable: unavailable,
    };
  }

  async diffOf(task: IndexedTask): Promise<Omit<TaskDiff, "taskId">> {
    const s = task.state;
    if (!task.verified)
      return {
        diff: null,
        origin: null,
        unavailable:
          "caesar has no record of this task (made by an older caesar, or by someone else): its files are shown, no git command runs on what they say.",
      };
    try {
      if (s.phase === "finished" && s.start_tree && s.end_tree) {
        return {
          diff: await this.treeDiff(s.root, s.start_tree, s.end_tree),
          origin: "recorded",
          unavailable: null,
        };
      }
      const result = await taskResult(s, null);
      return {
        diff: await this.treeDiff(result.top, result.from, result.to),
        origin: result.origin,
        unavailable: null,
      };
    } catch (error) {
      if (!isCaesarError(error)) throw error;
      return { diff: null, origin: null, unavailable: messageOf(error) };
    }
  }

  private async treeDiff(cwd: string, from: string, to: string): Promise<Diff> {
    const key = `${from}..${to}`;
    const cached = this.diffs.get(key);
    if (cached) return cached;
    const [files, full] = await Promise.all([
      changedFiles(cwd, from, to),
      from === to ? "" : diffText(cwd, from, to),
    ]);
    const truncated = full.length > MAX_PATCH_CHARS;
    const diff = { from, to, files, patch: truncated ? full.slice(0, MAX_PATCH_CHARS) : full, truncated };
    this.diffs.set(key, diff);
    return diff;
  }
}
