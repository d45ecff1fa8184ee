/** One server-sent event as received. */
export interface SseMessage {
  event: string;
  id: string | undefined;
  data: string;
}

/**
 * A real SSE client over fetch: collects messages as they arrive, and lets a test wait for a condition
 * on them (no sleeps), then disconnect.
 */
export class SseClient {
  readonly messages: SseMessage[] = [];
  private waiters: (() => void)[] = [];
  private ended = false;

  private constructor(
    private readonly response: Response,
    private readonly controller: AbortController,
  ) {}

  static async connect(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const controller = new AbortController();
    const response = await fetch(url, {
      headers: { Accept: "text/event-stream", ...headers },
      signal: controller.signal,
    });
    const client = new SseClient(response, controller);
    void client.read();
    return client;
  }

  get status(): number {
    return this.response.status;
  }

  of(event: string): SseMessage[] {
    return this.messages.filter((message) => message.event === event);
  }

  /** Resolve once `predicate` holds on the messages received so far (or fail after `timeoutMs`). */
  async until(
    predicate: (messages: SseMessage[]) => boolean,
    what: string,
    timeoutMs = 30_000,
  ): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.messages)) {
      if (this.ended) throw new Error(`stream ended before ${what}: ${JSON.stringify(this.messages)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${what} within ${timeoutMs} ms: ${JSON.stringify(this.messages)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 500));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.controller.abort();
  }

  private async read(): Promise<void> {
    const reader = this.response.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end = buffer.indexOf("\n\n");
        while (end !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          this.parse(block);
          end = buffer.indexOf("\n\n");
        }
        this.wake();
      }
    } catch {
      // aborted
    } finally {
      this.ended = true;
      this.wake();
    }
  }

  private parse(block: string): void {
    let event = "message";
    let id: string | undefined;
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") event = value;
      else if (field === "id") id = value;
      else if (field === "data") data.push(value);
    }
    if (data.length > 0) this.messages.push({ event, id, data: data.join("\n") });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
