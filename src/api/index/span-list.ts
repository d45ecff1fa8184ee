/**
 * The byte ranges of a task's events in events.jsonl, by ordinal - 1, kept as two arrays of numbers
 * rather than an object per event: the index holds hundreds of thousands of them.
 */
export class SpanList {
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];

  get length(): number {
    return this.starts.length;
  }

  push(start: number, end: number): void {
    this.starts.push(start);
    this.ends.push(end);
  }

  /** The range of the event at 0-based `index`. */
  at(index: number): { start: number; end: number } {
    return { start: this.starts[index] ?? -1, end: this.ends[index] ?? -1 };
  }

  /** The ranges of events `from` (inclusive) to `to` (exclusive), 0-based. */
  slice(from: number, to: number): { start: number; end: number }[] {
    const out: { start: number; end: number }[] = [];
    for (let i = from; i < Math.min(to, this.starts.length); i++) out.push(this.at(i));
    return out;
  }

  /** The file was rewritten: every known line is gone (reads back as nothing); ordinals stay. */
  forget(): void {
    this.starts.fill(-1);
    this.ends.fill(-1);
  }
}
