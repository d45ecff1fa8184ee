import type { JsMsg } from "@nats-io/jetstream";
import { messageOf } from "../../support/errors.js";
import type { WorkerContext } from "./context.js";

/** A task this worker holds: the queue delivery it acts on (a redelivery here replaces it), its cancel. */
export class HeldTask {
  readonly abort = new AbortController();
  /** The worker is stopping without finishing it: publish nothing, let the queue give it to another. */
  abandoned = false;
  /** Its submitter cancelled it: its sub-tasks are cancelled with it. */
  cancelled = false;
  constructor(public msg: JsMsg) {}
}

/** Run a NATS operation, retrying while the server is away (a restart), for a minute at most. */
export async function retrying<T>(
  context: WorkerContext,
  what: string,
  operation: () => Promise<T>,
): Promise<T | undefined> {
  const deadline = Date.now() + 60_000;
  for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
    try {
      return await operation();
    } catch (error) {
      if (Date.now() > deadline) {
        context.log(`[worker] ${what}: ${messageOf(error)} (giving up)`);
        return undefined;
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
