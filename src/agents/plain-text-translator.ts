import type { ProcessExit, StreamOutcome, StreamTranslator } from "./adapter.js";

/**
 * The translator of agents with no native stream of their own (custom `[[agent]]` programs): their output
 * stays in raw.log; what they want seen they append to events.jsonl themselves. Keeps the end of stdout
 * (at most `maxTailBytes`, from a line's start) so the degraded report tier can search it. It reads no
 * line, so it takes stdout as raw chunks (`stdoutText`): the runner splits none of a flood into lines.
 */
export class PlainTextTranslator implements StreamTranslator {
  /** The end of stdout, in the chunks it came in; whole chunks are dropped from the front. */
  private readonly chunks: string[] = [];
  private length = 0;

  constructor(private readonly maxTailBytes = 256 * 1024) {}

  stdout(line: string) {
    this.stdoutText(`${line}\n`);
    return [];
  }

  stdoutText(text: string): void {
    this.chunks.push(text);
    this.length += text.length;
    while (this.chunks.length > 1 && this.length - this.chunks[0]!.length >= this.maxTailBytes)
      this.length -= this.chunks.shift()!.length;
  }

  async finish(_exit: ProcessExit): Promise<StreamOutcome> {
    let text = this.chunks.join("");
    if (text.length > this.maxTailBytes) {
      // The whole lines that fit, or the end of the last one when even that does not.
      let cut = text.length - this.maxTailBytes;
      // Never half of a character (a surrogate pair's second half).
      if (/[\udc00-\udfff]/.test(text[cut] ?? "")) cut += 1;
      const start = text[cut - 1] === "\n" ? cut : text.indexOf("\n", cut) + 1;
      text = text.slice(start > 0 && start < text.length ? start : cut);
    }
    return { finalText: text.replace(/\r\n/g, "\n").replace(/\r?\n?$/, "") };
  }
}
