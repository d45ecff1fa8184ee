import type { ProcessExit, StreamOutcome, StreamTranslator } from "./adapter.js";

/**
 * The translator of agents with no native stream of their own (custom `[[agent]]` programs): their output
 * stays in raw.log; what they want seen they append to events.jsonl themselves. Keeps the last lines of
 * stdout so the degraded report tier can search them.
 */
export class PlainTextTranslator implements StreamTranslator {
  private readonly tail: string[] = [];
  private tailBytes = 0;

  constructor(private readonly maxTailBytes = 256 * 1024) {}

  stdout(line: string) {
    this.tail.push(line);
    this.tailBytes += line.length + 1;
    while (this.tailBytes > this.maxTailBytes && this.tail.length > 1) {
      this.tailBytes -= this.tail.shift()!.length + 1;
    }
    return [];
  }

  async finish(_exit: ProcessExit): Promise<StreamOutcome> {
    return { finalText: this.tail.join("\n") };
  }
}
