/**
 * At most `size` holders at once, served in the order they asked (so one agent's puller cannot starve
 * another's on a worker with little capacity).
 */
export class Capacity {
  private used = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {}

  get inUse(): number {
    return this.used;
  }

  acquire(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    if (this.used < this.size) {
      this.used += 1;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const grant = () => {
        signal.removeEventListener("abort", cancel);
        resolve(true);
      };
      const cancel = () => {
        const index = this.waiting.indexOf(grant);
        if (index !== -1) this.waiting.splice(index, 1);
        resolve(false);
      };
      this.waiting.push(grant);
      signal.addEventListener("abort", cancel, { once: true });
    });
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.used = Math.max(0, this.used - 1);
  }
}
