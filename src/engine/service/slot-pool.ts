import type { SlotHolder } from "../store/state.js";

interface Holder {
  since: string;
  /** A sub-task running in this holder's lent place (see take). */
  borrower?: string;
  /** Whose lent place this holder runs in, if it borrowed one. */
  lender?: string;
}

interface Waiter {
  taskId: string;
  parentId: string | null;
  wake: () => void;
}

/**
 * The project's `[policy] max_parallel` slots, kept by the one conductor service that conducts every local
 * task of the project: a slot is a place in this pool, released when the task's whole run is over (its
 * agent's process group ended, its final state written), so no lock and no file says who holds what.
 *
 * A sub-task may run in its parent's **lent place**: every running task keeps room for one sub-task at a
 * time (as make's jobserver gives each sub-make one implicit token), so a task waiting on its descendants
 * never keeps them from running — a chain deeper than `max_parallel` runs, each level in its parent's
 * place, and a fan-out's first child runs at once while the others queue for free slots.
 *
 * Tasks conducted by another live process (a conductor of an older caesar, a service stopping after its
 * tasks) count against the limit too: `foreign()` names them.
 */
export class SlotPool {
  private readonly holders = new Map<string, Holder>();
  private readonly waiters: Waiter[] = [];
  private readonly releases = new Map<string, () => void>();

  constructor(private readonly foreign: () => SlotHolder[] = () => []) {}

  /**
   * Take a slot for `taskId` (with at most `max` taken, lent places aside), waiting while none is free;
   * `onWait` is told who holds them whenever that changes. `adopted`: the task held a slot already (its
   * conductor changed): it is counted at once. Resolves with the release.
   */
  async take(
    taskId: string,
    parentId: string | null,
    max: () => number,
    onWait: (holders: SlotHolder[]) => Promise<void>,
    signal: AbortSignal,
    adopted = false,
  ): Promise<() => void> {
    // Already counted (claimed when the service took the task over): the same place.
    const held = this.releases.get(taskId);
    if (held) return held;
    let told: string | undefined;
    for (;;) {
      if (signal.aborted) {
        this.dropWaiter(taskId);
        this.wakeAll();
        throw signal.reason ?? new Error("aborted");
      }
      const placed = adopted ? this.claim(taskId) : this.tryTake(taskId, parentId, max());
      if (placed) return placed;
      const holders = this.list();
      const key = holders.map((holder) => holder.task_id).join(",");
      if (key !== told) {
        told = key;
        await onWait(holders);
      }
      await this.wait(taskId, parentId, signal);
    }
  }

  /**
   * Count a task as holding a slot now, whatever the limit (it was running when its conductor changed:
   * its agent runs). Called as soon as the service decides to take it over — before any queued task can
   * take the place — and again when its conductor asks (the same place). Returns the release.
   */
  claim(taskId: string): () => void {
    const release = this.releases.get(taskId);
    if (release) return release;
    return this.place(taskId, undefined);
  }

  /** Who holds a slot now (this service's tasks and the others'), oldest first. */
  list(): SlotHolder[] {
    const own = [...this.holders.entries()]
      .filter(([, holder]) => holder.lender === undefined)
      .map(([task_id, holder]) => ({ task_id, pid: process.pid, since: holder.since }));
    return [...own, ...this.foreign()].sort((a, b) => a.since.localeCompare(b.since));
  }

  /** Tasks holding a place now (lent places included). */
  get size(): number {
    return this.holders.size;
  }

  private tryTake(taskId: string, parentId: string | null, max: number): (() => void) | undefined {
    const parent = parentId === null ? undefined : this.holders.get(parentId);
    if (parent && parent.borrower === undefined) {
      parent.borrower = taskId;
      return this.place(taskId, parentId ?? undefined);
    }
    // Slots are given in order of asking: no task overtakes one that waits longer.
    const head = this.waiters[0];
    if (head && head.taskId !== taskId) return undefined;
    const used = [...this.holders.values()].filter((holder) => holder.lender === undefined).length;
    if (used + this.foreign().length >= max) return undefined;
    return this.place(taskId, undefined);
  }

  private place(taskId: string, lender: string | undefined): () => void {
    this.holders.set(taskId, { since: new Date().toISOString(), ...(lender ? { lender } : {}) });
    this.dropWaiter(taskId);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const holder = this.holders.get(taskId);
      this.holders.delete(taskId);
      this.releases.delete(taskId);
      if (holder?.lender) {
        const parent = this.holders.get(holder.lender);
        if (parent?.borrower === taskId) delete parent.borrower;
      }
      this.wakeAll();
    };
    this.releases.set(taskId, release);
    return release;
  }

  private wait(taskId: string, parentId: string | null, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let waiter = this.waiters.find((candidate) => candidate.taskId === taskId);
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      };
      if (waiter) waiter.wake = done;
      else {
        waiter = { taskId, parentId, wake: done };
        this.waiters.push(waiter);
      }
      // Other processes' tasks end without telling this one: look again now and then.
      const timer = setTimeout(done, 2000);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  private dropWaiter(taskId: string): void {
    const index = this.waiters.findIndex((waiter) => waiter.taskId === taskId);
    if (index !== -1) this.waiters.splice(index, 1);
  }

  /** Something was released: every waiter looks again (in order). */
  wakeAll(): void {
    for (const waiter of [...this.waiters]) waiter.wake();
  }
}
