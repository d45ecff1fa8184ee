/** Open server-sent-event streams, so a server shutting down can end them (they never end on their own). */
export class StreamRegistry {
  private readonly open = new Set<() => void>();

  add(stop: () => void): () => void {
    this.open.add(stop);
    return () => this.open.delete(stop);
  }

  get size(): number {
    return this.open.size;
  }

  closeAll(): void {
    for (const stop of [...this.open]) stop();
    this.open.clear();
  }
}
