import { describe, expect, it } from "vitest";
import { PlainTextTranslator } from "../../src/agents/plain-text-translator.js";
import { OutputTail, tailOf } from "../../src/support/output-tail.js";

/** What a tail must hold: the last `max` non-blank lines, `\r` of `\r\n` gone, the unterminated end included. */
function expectedTail(text: string, max: number): string {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== "");
  return lines
    .slice(-max)
    .map((line) => line.replace(/\s+$/, ""))
    .join("\n");
}

/** A deterministic generator, so that a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe("the tail of an output fed in chunks", () => {
  it("keeps the last lines whatever the chunks' boundaries (blank lines, CRLF, a line cut in two)", () => {
    const next = random(7);
    const pieces = ["alpha", "", "  ", "beta\r", "gamma delta", "\t", "ε unicode ✓", "last"];
    for (let round = 0; round < 200; round++) {
      let text = "";
      const count = Math.floor(next() * 60);
      for (let i = 0; i < count; i++) text += `${pieces[Math.floor(next() * pieces.length)]}${i}\n`;
      if (next() < 0.5) text += "unterminated end";
      const max = 1 + Math.floor(next() * 12);
      const tail = new OutputTail(max);
      for (let at = 0; at < text.length; ) {
        const size = 1 + Math.floor(next() * 40);
        tail.pushText(text.slice(at, at + size));
        at += size;
      }
      expect(tail.text, JSON.stringify({ text, max })).toBe(expectedTail(text, max));
    }
  });

  it("reads a chunk of a million short lines from its end", () => {
    const text = `${"x\n".repeat(1_000_000)}second to last\nlast\n`;
    expect(tailOf(text, 3)).toBe("x\nsecond to last\nlast");
  });

  it("cuts a long line to a readable length", () => {
    expect(tailOf(`${"y".repeat(2000)}\n`, 5)).toHaveLength(500);
  });
});

describe("a plain-text agent's kept output", () => {
  it("is the end of what it printed, from a line's start, as chunks or as lines", async () => {
    const chunks = new PlainTextTranslator(64);
    const lines = new PlainTextTranslator(64);
    const text = Array.from({ length: 40 }, (_, i) => `line ${i}\r\n`).join("");
    for (let at = 0; at < text.length; at += 7) chunks.stdoutText(text.slice(at, at + 7));
    for (const line of text.split("\r\n").slice(0, -1)) lines.stdout(line);
    const lastLines = (from: number) =>
      Array.from({ length: 40 - from }, (_, i) => `line ${from + i}`).join("\n");
    // 64 characters: seven whole lines of 9 (CRLF) as written, eight of 8 when fed as lines.
    expect((await chunks.finish({ code: 0, signal: null })).finalText).toBe(lastLines(33));
    expect((await lines.finish({ code: 0, signal: null })).finalText).toBe(lastLines(32));
    const long = new PlainTextTranslator(10);
    long.stdoutText(`${"z".repeat(30)}\n`);
    expect((await long.finish({ code: 0, signal: null })).finalText).toBe("z".repeat(9));
  });
});

describe("the edges of a plain-text agent's kept output", () => {
  it("drops the carriage return of an unterminated last line, and never keeps half a character", async () => {
    const crlf = new PlainTextTranslator();
    crlf.stdoutText("done\r\nok\r");
    expect((await crlf.finish({ code: 0, signal: null })).finalText).toBe("done\nok");
    const emoji = new PlainTextTranslator(3);
    emoji.stdoutText("ab😀😀");
    const kept = (await emoji.finish({ code: 0, signal: null })).finalText!;
    expect(kept).toBe("😀");
    expect(kept).not.toMatch(/^[\udc00-\udfff]/);
  });
});
