import { describe, expect, it } from "vitest";
import { formatElapsed } from "../../src/ui/elapsed.js";
import {
  displayWidth,
  oneLine,
  sanitize,
  stripAnsi,
  truncate,
  truncatePainted,
  wrap,
} from "../../src/ui/text.js";

describe("display width", () => {
  it("counts columns, not code units: escapes 0, combining marks 0, CJK and emoji 2", () => {
    expect(displayWidth("\x1b[31mred\x1b[0m")).toBe(3);
    expect(displayWidth("e\u0301")).toBe(1);
    expect(displayWidth("日本")).toBe(4);
    expect(displayWidth("ok 🚀")).toBe(5);
    expect(displayWidth("✓ ─│┌")).toBe(5);
  });

  it("counts an emoji sequence or a flag as the 2 columns a terminal draws", () => {
    expect(displayWidth("🇫🇷")).toBe(2); // two regional indicators
    expect(displayWidth("👍🏽")).toBe(2); // skin tone modifier
    expect(displayWidth("👨‍👩‍👧")).toBe(2); // zero-width-joiner sequence
    expect(displayWidth("❤️")).toBe(2); // variation selector 16
    expect(displayWidth("done 🇫🇷 ✓")).toBe(9);
  });
});

describe("truncate and wrap", () => {
  it("cuts to the width, ellipsis included, and never splits a wide character", () => {
    expect(truncate("abcdefghij", 6)).toBe("abcde…");
    expect(truncate("abcdefghij", 6, "...")).toBe("abc...");
    expect(displayWidth(truncate("日本語のテキスト", 7))).toBeLessThanOrEqual(7);
    expect(truncate("short", 10)).toBe("short");
    expect(truncate("anything", Number.POSITIVE_INFINITY)).toBe("anything");
  });

  it("never splits an emoji sequence or a flag", () => {
    expect(truncate("ab👨‍👩‍👧cd", 5)).toBe("ab👨‍👩‍👧…");
    expect(truncate("ab👨‍👩‍👧cd", 4)).toBe("ab…");
    expect(truncate("🇫🇷🇩🇪🇮🇹", 5)).toBe("🇫🇷🇩🇪…");
    expect(truncatePainted("\x1b[1m🇫🇷🇩🇪🇮🇹\x1b[0m", 3)).toBe("\x1b[1m🇫🇷\x1b[0m…");
    expect(wrap("🇫🇷🇩🇪🇮🇹", 4)).toEqual(["🇫🇷🇩🇪", "🇮🇹"]);
    expect(wrap("go 👍🏽 now", 5)).toEqual(["go 👍🏽", "now"]);
  });

  it("wraps on words, keeps newlines, breaks words longer than a line", () => {
    expect(wrap("the quick brown fox", 9)).toEqual(["the quick", "brown fox"]);
    expect(wrap("a\nb", 10)).toEqual(["a", "b"]);
    expect(wrap("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"]);
    expect(wrap("one two", Number.POSITIVE_INFINITY)).toEqual(["one two"]);
  });
});

describe("text from agents", () => {
  it("loses escape sequences and control characters, so it cannot move the cursor or recolour the screen", () => {
    const hostile = "ok\x1b[2J\x1b[H\x1b]0;title\x07 done\x07\r\n\tnext";
    expect(sanitize(hostile)).toBe("ok done\n  next");
    expect(oneLine(hostile)).toBe("ok done next");
    expect(stripAnsi("\x1b[1;38;5;134mx\x1b[0m")).toBe("x");
  });
});

describe("elapsed time", () => {
  it("is rounded down, so no unit overflows and no threshold shows early", () => {
    expect(formatElapsed(389.7)).toBe("389ms");
    expect(formatElapsed(6_279)).toBe("6.2s");
    expect(formatElapsed(29_999)).toBe("29s");
    expect(formatElapsed(59_960)).toBe("59s");
    expect(formatElapsed(239_880)).toBe("3m59s");
    expect(formatElapsed(3_900_000)).toBe("1h05m");
    expect(formatElapsed(-5)).toBe("0ms");
  });
});

describe("cutting painted text", () => {
  it("keeps the escape sequences, counts only what shows, and resets the style after the cut", () => {
    const painted = "\x1b[32m✓ success\x1b[0m and more";
    expect(truncatePainted(painted, 100)).toBe(painted);
    const cut = truncatePainted(painted, 8);
    expect(cut).toBe("\x1b[32m✓ succe\x1b[0m…");
    expect(displayWidth(cut)).toBe(8);
  });
});
