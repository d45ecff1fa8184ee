/** The request ids seen recently, so a replayed mutation is refused instead of run twice. Bounded. */
export class RecentIds {
  private readonly seen = new Set<string>();

  constructor(private readonly capacity = 10_000) {}

  /** Record `id`; false if it was already there. */
  add(id: string): boolean {
    const key = id.toLowerCase();
    if (this.seen.has(key)) return false;
    this.seen.add(key);
    if (this.seen.size > this.capacity) this.seen.delete(this.seen.values().next().value as string);
    return true;
  }
}
