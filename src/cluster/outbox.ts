import type { JetStreamClient } from "@nats-io/jetstream";
import { headers as makeHeaders } from "@nats-io/transport-node";
import { HEADER_ATTEMPT, HEADER_COUNTER, HEADER_WORKER, type LogKind, logSubject } from "./names.js";

interface Pending {
  subject: string;
  data: Uint8Array | string;
  n: number;
}

/**
 * What a worker publishes about one attempt of a task, in order, each message retried until the server
 * stores it. A server restarting holds the queue, it loses nothing: the message id makes a retry that did
 * reach the server count once there, and the per-attempt counter (`Caesar-N`) lets the relay drop a
 * duplicate that came after the server forgot the id.
 */
export class Outbox {
  private readonly pending: Pending[] = [];
  private counter = 0;
  private pumping: Promise<void> | undefined;
  private closed = false;
  private waiters: (() => void)[] = [];
  /** The stream sequence of the last message stored (0: none yet). */
  lastSeq = 0;

  constructor(
    private readonly js: JetStreamClient,
    private readonly taskId: string,
    private readonly attempt: number,
    private readonly workerId: string,
  ) {}

  publish(kind: LogKind, data: Uint8Array | string): void {
    if (this.closed) return;
    this.counter += 1;
    this.pending.push({ subject: logSubject(this.taskId, kind), data, n: this.counter });
    this.pumping ??= this.pump().finally(() => {
      this.pumping = undefined;
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  /** Resolve once everything published so far is stored (or the outbox was closed). */
  async flush(): Promise<number> {
    while (this.pending.length > 0 && !this.closed) {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    return this.lastSeq;
  }

  /** Stop publishing (the task's claim was lost: what this attempt says no longer counts). */
  close(): void {
    this.closed = true;
    this.pending.length = 0;
    for (const wake of this.waiters.splice(0)) wake();
  }

  private async pump(): Promise<void> {
    let backoff = 100;
    while (this.pending.length > 0 && !this.closed) {
      const next = this.pending[0]!;
      const headers = makeHeaders();
      headers.set(HEADER_ATTEMPT, String(this.attempt));
      headers.set(HEADER_WORKER, this.workerId);
      headers.set(HEADER_COUNTER, String(next.n));
      try {
        const ack = await this.js.publish(next.subject, next.data, {
          headers,
          msgID: `${this.taskId}.${this.attempt}.${next.n}`,
          timeout: 5_000,
        });
        this.lastSeq = Math.max(this.lastSeq, ack.seq);
        this.pending.shift();
        backoff = 100;
      } catch {
        // The server is away (restarting, or the connection is being re-established): try again.
        await new Promise((resolve) => setTimeout(resolve, backoff));
        backoff = Math.min(backoff * 2, 2_000);
      }
    }
  }
}
