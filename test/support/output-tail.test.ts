import { describe, expect, it } from "vitest";
import { PlainTextTranslator } from "../../src/agents/plain-text-translator.js";
import { ByteTail, OutputTail, tailOf } from "../../src/support/output-tail.js";

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
    for (let at = 0; at < text.length; at += 7) chunks.stdoutBytes(Buffer.from(text.slice(at, at + 7)));
    for (const line of text.split("\r\n").slice(0, -1)) lines.stdout(line);
    const lastLines = (from: number) =>
      Array.from({ length: 40 - from }, (_, i) => `line ${from + i}`).join("\n");
    // 64 characters: seven whole lines of 9 (CRLF) as written, eight of 8 when fed as lines.
    expect((await chunks.finish({ code: 0, signal: null })).finalText).toBe(lastLines(33));
    expect((await lines.finish({ code: 0, signal: null })).finalText).toBe(lastLines(32));
    const long = new PlainTextTranslator(10);
    long.stdoutBytes(Buffer.from(`${"z".repeat(30)}\n`));
    expect((await long.finish({ code: 0, signal: null })).finalText).toBe("z".repeat(9));
  });
});

describe("the edges of a plain-text agent's kept output", () => {
  it("drops the carriage return of an unterminated last line, and never keeps half a character", async () => {
    const crlf = new PlainTextTranslator();
    crlf.stdoutBytes(Buffer.from("done\r\nok\r"));
    expect((await crlf.finish({ code: 0, signal: null })).finalText).toBe("done\nok");
    // 5 bytes: the last character (4) and the last byte of the one before it, which is not kept.
    const emoji = new PlainTextTranslator(5);
    emoji.stdoutBytes(Buffer.from("ab😀😀"));
    const kept = (await emoji.finish({ code: 0, signal: null })).finalText!;
    expect(kept).toBe("😀");
    expect(kept).not.toMatch(/^[\udc00-\udfff]/);
  });
});

describe("the end of a byte stream fed in chunks", () => {
  it("keeps the last bytes whatever the chunks' sizes, and reads them from a whole character", () => {
    const next = random(11);
    const pieces = ["a", "é", "✓", "😀", "\n", "\r\n", "word "];
    for (let round = 0; round < 200; round++) {
      let text = "";
      // Small bounds, and large ones its ring grows to by doubling.
      const large = next() < 0.3;
      const count = Math.floor(next() * (large ? 8000 : 400));
      for (let i = 0; i < count; i++) text += pieces[Math.floor(next() * pieces.length)];
      const bytes = Buffer.from(text);
      const max = 1 + Math.floor(next() * (large ? 20_000 : 300));
      const tail = new ByteTail(max);
      for (let at = 0; at < bytes.length; ) {
        const size = 1 + Math.floor(next() * (next() < 0.2 ? (large ? 9000 : 600) : 20));
        tail.push(bytes.subarray(at, at + size));
        at += size;
      }
      const expected = bytes.subarray(Math.max(0, bytes.length - max));
      expect(tail.bytes().equals(expected), JSON.stringify({ text, max })).toBe(true);
      const kept = tail.text();
      expect(text.endsWith(kept), JSON.stringify({ text, max, kept })).toBe(true);
      expect(kept).not.toContain("\ufffd");
      expect(Buffer.byteLength(kept)).toBeGreaterThan(expected.length - 4);
    }
  });

  it("copies what it keeps: the buffer it was given may be reused", () => {
    const buffer = Buffer.from("first\n");
    const tail = new ByteTail(100);
    tail.push(buffer);
    buffer.write("XXXXX\n");
    expect(tail.text()).toBe("first\n");
  });
});

describe("a plain-text agent's kept output, fed as the bytes came", () => {
  it("does not depend on how the bytes were cut into chunks (characters cut in two included)", async () => {
    const next = random(5);
    const pieces = ["line", " ", "é", "😀", "\n", "\r\n", "\n\n"];
    for (let round = 0; round < 100; round++) {
      let text = "";
      const count = Math.floor(next() * 300);
      for (let i = 0; i < count; i++) text += pieces[Math.floor(next() * pieces.length)];
      const bytes = Buffer.from(text);
      const max = 4 + Math.floor(next() * 200);
      const whole = new PlainTextTranslator(max);
      whole.stdoutBytes(bytes);
      const chunked = new PlainTextTranslator(max);
      for (let at = 0; at < bytes.length; ) {
        const size = 1 + Math.floor(next() * 50);
        chunked.stdoutBytes(bytes.subarray(at, at + size));
        at += size;
      }
      const expected = (await whole.finish({ code: 0, signal: null })).finalText!;
      const got = (await chunked.finish({ code: 0, signal: null })).finalText!;
      const context = JSON.stringify({ text, max, got });
      expect(got, context).toBe(expected);
      // The end of what was printed, CRLF read as LF, within its bytes, never from half a character.
      expect(
        text
          .replace(/\r\n/g, "\n")
          .replace(/\r?\n?$/, "")
          .endsWith(got),
        context,
      ).toBe(true);
      expect(Buffer.byteLength(got), context).toBeLessThanOrEqual(max);
      expect(got, context).not.toContain("\ufffd");
    }
  });
});
