/** Own faults in a row (tasks handed back) after which a worker quarantines itself. */
const QUARANTINE_AFTER = 3;

/**
 * A worker's own health, as its tasks show it: each task it could not prepare for a fault of its own
 * (its remote, its disk) counts, each task it prepared resets the count. After `QUARANTINE_AFTER` in a
 * row it quarantines itself: it takes no new task (what runs finishes) and says why in its registry
 * record, until it is restarted.
 */
export class WorkerHealth {
  private faultsInARow = 0;
  /** Aborted when the worker quarantines itself: its pullers stop. */
  readonly quarantine = new AbortController();
  quarantined: { at: string; reason: string } | null = null;

  constructor(private readonly onQuarantine: (reason: string) => void) {}

  /** The task was prepared (its agent got to run): the worker's own machinery works. */
  recordPrepared(): void {
    this.faultsInARow = 0;
  }

  /** The worker could not prepare a task for a fault of its own. */
  recordOwnFault(reason: string): void {
    this.faultsInARow += 1;
    if (this.faultsInARow < QUARANTINE_AFTER || this.quarantined) return;
    const why = `${this.faultsInARow} tasks in a row could not be prepared here (last: ${reason})`;
    this.quarantined = { at: new Date().toISOString(), reason: why };
    this.quarantine.abort();
    this.onQuarantine(why);
  }
}
