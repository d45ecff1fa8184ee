import { git } from "../../workspace/git.js";
import { keepRefName, resultRefName } from "../../workspace/result-ref.js";
import { liveEntry } from "../cas.js";
import { startRefName } from "../names.js";
import { ClaimSchema, decode } from "../wire.js";
import type { WorkerContext } from "./context.js";

/** A cluster task's id (ids of 16 hex digits): only such result refs are pruned when their claim is gone. */
const CLUSTER_TASK_ID = /^t_[0-9a-f]{16}$/;
/** Refs deleted per git push. */
const BATCH = 100;

export interface Pruned {
  results: string[];
  starts: string[];
}

/**
 * Prune the shared remote's `refs/caesar/` (any worker may, at start and once an hour):
 * - a task's result ref (`refs/caesar/tasks/<id>`) once its task ended more than `keepMs` ago — by the
 *   server's time of the claim's last write — unless it was applied or pinned (`refs/caesar/keep/<id>`);
 *   one whose claim is gone (claims expire 30 days after their last write) goes too, unless kept;
 * - a start ref (`refs/caesar/start/<id>`) whose task's claim says finished: however the task ended, and
 *   whether or not its submitter's relay came back to delete it.
 * Each ref is deleted only if it still names what was listed (a lease): a ref pushed again meanwhile stays.
 */
export async function pruneRemoteRefs(context: WorkerContext, keepMs: number): Promise<Pruned> {
  const listed = await git(context.top, ["ls-remote", "--quiet", context.gitRemote, "refs/caesar/*"], {
    allowFailure: true,
  });
  if (listed.code !== 0)
    throw new Error(`cannot list refs/caesar/ on ${context.gitRemote}: ${listed.stderr.trim()}`);
  const refs = new Map<string, string>();
  for (const line of listed.stdout.split("\n")) {
    const [sha, ref] = line.trim().split("\t");
    if (sha && ref) refs.set(ref, sha);
  }
  const now = await context.serverNow();
  const pruned: Pruned = { results: [], starts: [] };
  for (const ref of refs.keys()) {
    const result = ref.match(/^refs\/caesar\/tasks\/([^/]+)$/)?.[1];
    const start = ref.match(/^refs\/caesar\/start\/([^/]+)$/)?.[1];
    const id = result ?? start;
    if (!id) continue;
    const entry = await liveEntry(context.claims, id).catch(() => null);
    if (entry === null) continue; // the claims could not be read: nothing is judged
    const claim = entry && decode(ClaimSchema, entry.value);
    const finished = claim?.state === "finished";
    if (start !== undefined) {
      if (finished) pruned.starts.push(id);
    } else if (!refs.has(keepRefName(id))) {
      const old = entry ? finished && now - entry.created.getTime() > keepMs : CLUSTER_TASK_ID.test(id);
      if (old) pruned.results.push(id);
    }
  }
  const deletions = [
    ...pruned.results.map((id) => resultRefName(id)),
    ...pruned.starts.map((id) => startRefName(id)),
  ];
  for (let at = 0; at < deletions.length; at += BATCH) {
    const batch = deletions.slice(at, at + BATCH);
    await git(
      context.top,
      [
        "push",
        "--quiet",
        "--no-verify",
        ...batch.map((ref) => `--force-with-lease=${ref}:${refs.get(ref)}`),
        context.gitRemote,
        ...batch.map((ref) => `:${ref}`),
      ],
      { allowFailure: true },
    );
  }
  return pruned;
}
