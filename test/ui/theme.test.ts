import { describe, expect, it } from "vitest";
import { detectColorDepth, detectTerminal, detectUnicode } from "../../src/ui/terminal.js";
import { displayWidth } from "../../src/ui/text.js";
import { ASCII_FRAME, ASCII_MARKS, makeTheme, UNICODE_FRAME, UNICODE_MARKS } from "../../src/ui/theme.js";

describe("colour depth", () => {
  it("comes from COLORTERM and TERM on a terminal", () => {
    expect(detectColorDepth({ TERM: "xterm", COLORTERM: "truecolor" }, true)).toBe(3);
    expect(detectColorDepth({ TERM: "xterm", COLORTERM: "24bit" }, true)).toBe(3);
    expect(detectColorDepth({ TERM: "xterm-256color" }, true)).toBe(2);
    expect(detectColorDepth({ TERM: "tmux-256color" }, true)).toBe(2);
    expect(detectColorDepth({ TERM: "xterm" }, true)).toBe(1);
    expect(detectColorDepth({}, true)).toBe(0);
  });

  it("is none outside a terminal, unless FORCE_COLOR asks for it", () => {
    expect(detectColorDepth({ TERM: "xterm-256color" }, false)).toBe(0);
    expect(detectColorDepth({ TERM: "xterm-256color", FORCE_COLOR: "1" }, false)).toBe(2);
    expect(detectColorDepth({ FORCE_COLOR: "3" }, false)).toBe(3);
    expect(detectColorDepth({ TERM: "xterm-256color", FORCE_COLOR: "0" }, true)).toBe(0);
  });

  it("is cut by NO_COLOR and TERM=dumb, whatever else says", () => {
    expect(detectColorDepth({ TERM: "xterm-256color", COLORTERM: "truecolor", NO_COLOR: "1" }, true)).toBe(0);
    expect(detectColorDepth({ TERM: "xterm", FORCE_COLOR: "3", NO_COLOR: "yes" }, true)).toBe(0);
    expect(detectColorDepth({ TERM: "dumb", COLORTERM: "truecolor" }, true)).toBe(0);
    expect(detectColorDepth({ TERM: "dumb", FORCE_COLOR: "2" }, true)).toBe(0);
    // An empty NO_COLOR does not count (no-color.org).
    expect(detectColorDepth({ TERM: "xterm", NO_COLOR: "" }, true)).toBe(1);
  });
});

describe("UTF-8", () => {
  it("is decided by the first of LC_ALL, LC_CTYPE, LANG that is set", () => {
    expect(detectUnicode({ LANG: "en_US.UTF-8" })).toBe(true);
    expect(detectUnicode({ LANG: "C.utf8" })).toBe(true);
    expect(detectUnicode({ LANG: "C" })).toBe(false);
    expect(detectUnicode({})).toBe(false);
    expect(detectUnicode({ LC_ALL: "C", LANG: "en_US.UTF-8" })).toBe(false);
    expect(detectUnicode({ LC_CTYPE: "fr_FR.UTF-8", LANG: "C" })).toBe(true);
    expect(detectUnicode({ LC_ALL: "POSIX" })).toBe(false);
  });
});

describe("terminal detection", () => {
  it("reads size from a terminal, COLUMNS from a pipe", () => {
    expect(detectTerminal({ isTTY: true, columns: 120, rows: 40 }, { TERM: "xterm" })).toEqual({
      isTTY: true,
      color: 1,
      unicode: false,
      width: 120,
      height: 40,
    });
    expect(detectTerminal({}, { COLUMNS: "72", LANG: "en_US.UTF-8" })).toEqual({
      isTTY: false,
      color: 0,
      unicode: true,
      width: 72,
      height: undefined,
    });
  });
});

describe("theme", () => {
  it("has ASCII marks and frames of the same width as the Unicode ones", () => {
    for (const key of Object.keys(UNICODE_MARKS) as (keyof typeof UNICODE_MARKS)[]) {
      expect(displayWidth(ASCII_MARKS[key]), key).toBe(displayWidth(UNICODE_MARKS[key]));
      expect(ASCII_MARKS[key]).toMatch(/^[\x20-\x7e]+$/);
    }
    for (const key of Object.keys(UNICODE_FRAME) as (keyof typeof UNICODE_FRAME)[]) {
      expect(displayWidth(ASCII_FRAME[key]), key).toBe(displayWidth(UNICODE_FRAME[key]));
    }
  });

  it("paints a role at the terminal's depth, and nothing without colour", () => {
    expect(makeTheme({ color: 1, unicode: true }).paint("ok", "done")).toBe("\x1b[32mdone\x1b[0m");
    expect(makeTheme({ color: 2, unicode: true }).paint("fail", "x")).toBe("\x1b[38;5;160mx\x1b[0m");
    expect(makeTheme({ color: 3, unicode: true }).paint("warn", "x")).toMatch(
      /^\x1b\[38;2;\d+;\d+;\d+mx\x1b\[0m$/,
    );
    expect(makeTheme({ color: 0, unicode: true }).paint("attention", "question")).toBe("question");
    expect(makeTheme({ color: 2, unicode: true }).paint(undefined, "primary")).toBe("primary");
  });
});
