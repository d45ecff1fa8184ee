import { ByteTail, characterStart } from "../support/output-tail.js";
import type { ProcessExit, StreamOutcome, StreamTranslator } from "./adapter.js";

/**
 * The translator of agents with no native stream of their own (custom `[[agent]]` programs): their output
 * stays in raw.log; what they want seen they append to events.jsonl themselves. Keeps the end of stdout
 * (at most `maxTailBytes` bytes, from a line's start) so the degraded report tier can search it. It reads
 * no line, so it takes stdout as the bytes the agent wrote (`stdoutBytes`): the runner neither decodes nor
 * splits a flood; only the kept end is decoded, once, at the finish.
 */
export class PlainTextTranslator implements StreamTranslator {
  /** One byte more than is kept: whether the kept end starts a line is then known. */
  private readonly tail: ByteTail;
  private seen = 0;

  constructor(private readonly maxTailBytes = 256 * 1024) {
    this.tail = new ByteTail(maxTailBytes + 1);
  }

  stdout(line: string) {
    this.stdoutBytes(Buffer.from(`${line}\n`));
    return [];
  }

  stdoutBytes(bytes: Uint8Array): void {
    this.seen += bytes.length;
    this.tail.push(bytes);
  }

  async finish(_exit: ProcessExit): Promise<StreamOutcome> {
    let kept = this.tail.bytes();
    if (this.seen > this.maxTailBytes) {
      // The whole lines that fit, or the end of the last one when even that does not; never half of a
      // character (a newline byte is never part of one).
      const cut = characterStart(kept, kept.length - this.maxTailBytes);
      const start = kept[cut - 1] === 0x0a ? cut : kept.indexOf(0x0a, cut) + 1;
      kept = kept.subarray(start > 0 && start < kept.length ? start : cut);
    }
    return {
      finalText: kept
        .toString("utf8")
        .replace(/\r\n/g, "\n")
        .replace(/\r?\n?$/, ""),
    };
  }
}
