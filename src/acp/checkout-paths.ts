import { isAbsolute, join, relative, sep } from "node:path";

/** Where the task works, and where its change lands: enough to show the user's paths, not the worktree's. */
export interface CheckoutLayout {
  /** The task's workspace (the worktree's, or the project's for a task run in place). */
  workspace: string;
  /** The task's worktree, when it has one. */
  worktree: string | null;
  /** The user's checkout the worktree mirrors (the repository's top), where `caesar apply` writes. */
  top: string | null;
}

/**
 * The delegate's paths as the editor's user knows them: a file of the task's worktree
 * (`<top>/.caesar/wt/<id>/src/a.ts`) is shown as the same file of the user's checkout (`<top>/src/a.ts`),
 * where its change lands once applied — an editor that opens it opens the user's file, never the worktree.
 * Paths outside the worktree are shown as they are.
 */
export class CheckoutPaths {
  constructor(private layout: CheckoutLayout) {}

  /** The task's state moved on (its worktree is known once it is prepared). */
  update(layout: CheckoutLayout): void {
    this.layout = layout;
  }

  /** An absolute path in the user's checkout (a relative one is the workspace's). */
  file(path: string): string {
    const absolute = isAbsolute(path) ? path : join(this.layout.workspace, path);
    const { worktree, top } = this.layout;
    if (!worktree || !top) return absolute;
    const inside = relative(worktree, absolute);
    if (inside === "") return top;
    if (inside.startsWith(`..${sep}`) || inside === ".." || isAbsolute(inside)) return absolute;
    return join(top, inside);
  }

  /** A title or text naming worktree paths, naming the user's instead. */
  text(value: string): string {
    const { worktree, top } = this.layout;
    return worktree && top ? value.replaceAll(`${worktree}${sep}`, `${top}${sep}`) : value;
  }
}
