import { existsSync } from "node:fs";
import { basename } from "node:path";
import { isCaesarError, messageOf } from "../../support/errors.js";
import { describeRepository, git, gitOut } from "../../workspace/git.js";
import { snapshotTree } from "../../workspace/snapshot.js";
import type { IndexedTask } from "../index/indexed-task.js";
import type { TaskIndex } from "../index/task-index.js";
import { Lru } from "./lru.js";
import { changeStatusOf } from "./task-summary.js";

/** At most this many files are listed in a snapshot (the count says how many there are). */
export const SNAPSHOT_FILE_LIMIT = 5000;

export type Repository =
  | { kind: "project"; id: string }
  | { kind: "worktree"; id: string; task: IndexedTask };

/**
 * The repositories of a workspace: the project repository (id: its directory name, as a slug) and the
 * worktree of every task that had one (id: the task id).
 */
export class RepositoryCatalog {
  private readonly trees = new Lru<string, SnapshotFiles>(32);

  private constructor(
    private readonly index: TaskIndex,
    readonly projectId: string,
    /** The git work tree's top level, or the project root outside git. */
    readonly top: string,
    readonly vcs: "git" | null,
  ) {}

  static async open(index: TaskIndex): Promise<RepositoryCatalog> {
    const repo = await describeRepository(index.root);
    const top = repo.kind === "none" ? index.root : repo.top;
    return new RepositoryCatalog(index, slugOf(basename(top)), top, repo.kind === "none" ? null : "git");
  }

  find(id: string): Repository | undefined {
    if (id === this.projectId) return { kind: "project", id };
    const task = this.index.task(id);
    // Only a task caesar has a record of: the path git would run in comes from that record.
    if (task?.verified && task.state.worktree) return { kind: "worktree", id, task };
    return undefined;
  }

  /** `repository.read`: metadata and a source snapshot (the file list of a tree, with sizes and blob ids). */
  async read(repository: Repository) {
    return repository.kind === "project" ? this.readProject() : this.readWorktree(repository.task);
  }

  private async readProject() {
    const worktrees = this.index
      .list()
      .filter((task) => task.verified && task.state.worktree)
      .map((task) => ({
        id: task.id,
        changeNumber: task.state.change_number,
        branch: task.state.branch,
        path: task.state.worktree,
        exists: existsSync(task.state.worktree!),
        phase: task.state.phase,
        changeStatus: changeStatusOf(task.state),
      }));
    const base = {
      id: this.projectId,
      kind: "project" as const,
      name: basename(this.top),
      path: this.top,
      vcs: this.vcs,
    };
    if (this.vcs === null) {
      return {
        ...base,
        head: null,
        branch: null,
        worktrees,
        snapshot: null,
        snapshotUnavailable: "The project is not a git repository.",
      };
    }
    const repo = await describeRepository(this.top);
    if (repo.kind !== "usable") {
      return {
        ...base,
        head: null,
        branch: null,
        worktrees,
        snapshot: null,
        snapshotUnavailable: "The repository has no commit yet.",
      };
    }
    const branch = await git(this.top, ["symbolic-ref", "--short", "-q", "HEAD"], { allowFailure: true });
    const tree = await gitOut(this.top, ["rev-parse", `${repo.head}^{tree}`]);
    return {
      ...base,
      head: repo.head,
      branch: branch.code === 0 ? branch.stdout.trim() : null,
      worktrees,
      snapshot: { of: "HEAD", commit: repo.head, tree, ...(await this.files(tree)) },
    };
  }

  private async readWorktree(task: IndexedTask) {
    const s = task.state;
    const exists = existsSync(s.worktree!);
    const base = {
      id: task.id,
      kind: "worktree" as const,
      project: this.projectId,
      path: s.worktree,
      exists,
      branch: s.branch,
      baseRef: s.base_ref,
      taskId: task.id,
      changeNumber: s.change_number,
      phase: s.phase,
      changeStatus: changeStatusOf(s),
    };
    try {
      // What is observed now: the worktree as it is (agent's uncommitted work included), else the tree
      // recorded when the task ended (kept under refs/caesar/tasks/<id> after gc).
      const source = exists
        ? { of: "worktree" as const, tree: await snapshotTree(s.worktree!, s.materialised) }
        : s.end_tree
          ? { of: "end-tree" as const, tree: s.end_tree }
          : undefined;
      if (!source)
        return {
          ...base,
          snapshot: null,
          snapshotUnavailable: "The worktree is gone and no end tree was recorded.",
        };
      return { ...base, snapshot: { ...source, ...(await this.files(source.tree)) } };
    } catch (error) {
      if (!isCaesarError(error)) throw error;
      return { ...base, snapshot: null, snapshotUnavailable: messageOf(error) };
    }
  }

  private async files(tree: string): Promise<SnapshotFiles> {
    const cached = this.trees.get(tree);
    if (cached) return cached;
    const out = await gitOut(this.top, ["ls-tree", "-r", "-l", "-z", "--full-tree", tree]);
    const records = out.split("\0").filter((record) => record !== "");
    const files = records.slice(0, SNAPSHOT_FILE_LIMIT).map((record) => {
      const tab = record.indexOf("\t");
      const [mode, type, oid, size] = record.slice(0, tab).split(/\s+/);
      return {
        path: record.slice(tab + 1),
        mode: mode!,
        type: type!,
        oid: oid!,
        size: size === "-" ? null : Number(size),
      };
    });
    const result = { fileCount: records.length, truncated: records.length > files.length, files };
    this.trees.set(tree, result);
    return result;
  }
}

interface SnapshotFiles {
  fileCount: number;
  truncated: boolean;
  files: { path: string; mode: string; type: string; oid: string; size: number | null }[];
}

export function slugOf(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[-.]+|-+$/g, "");
  return slug === "" ? "project" : slug;
}
