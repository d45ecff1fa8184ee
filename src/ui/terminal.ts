/**
 * What the terminal on the other end of a stream can show: colours (and how many), UTF-8, its size.
 * Read from the stream and the environment only, so tests can pass both.
 */

/** 0: no colour at all (no escape sequences); 1: 16 colours; 2: 256 colours; 3: 24-bit colour. */
export type ColorDepth = 0 | 1 | 2 | 3;

export interface TerminalCapabilities {
  isTTY: boolean;
  color: ColorDepth;
  unicode: boolean;
  /** Columns, when known (a terminal, or COLUMNS for a pipe). */
  width: number | undefined;
  /** Rows, when the stream is a terminal. */
  height: number | undefined;
}

type Env = Record<string, string | undefined>;

interface StreamLike {
  isTTY?: boolean;
  columns?: number;
  rows?: number;
}

/**
 * Colour depth from the environment. `NO_COLOR` (any non-empty value, https://no-color.org) and
 * `TERM=dumb` cut colour whatever else says; `FORCE_COLOR` (0–3) overrides the terminal check, for CI
 * logs that render ANSI; otherwise colour needs a terminal, and its depth comes from `COLORTERM`/`TERM`.
 */
export function detectColorDepth(env: Env, isTTY: boolean): ColorDepth {
  if (env.NO_COLOR) return 0;
  if (env.TERM === "dumb") return 0;
  const forced = env.FORCE_COLOR;
  if (forced !== undefined) {
    if (forced === "0" || forced === "false") return 0;
    if (forced === "2") return 2;
    if (forced === "3") return 3;
    return Math.max(1, depthFromTerm(env)) as ColorDepth;
  }
  if (!isTTY) return 0;
  return depthFromTerm(env);
}

function depthFromTerm(env: Env): ColorDepth {
  const colorterm = (env.COLORTERM ?? "").toLowerCase();
  if (colorterm === "truecolor" || colorterm === "24bit") return 3;
  const term = (env.TERM ?? "").toLowerCase();
  if (term.endsWith("-direct") || term.includes("truecolor")) return 3;
  if (term.includes("256")) return 2;
  if (term !== "") return 1;
  return 0;
}

/**
 * Is the locale UTF-8? The first of `LC_ALL`, `LC_CTYPE`, `LANG` that is set decides, as the C
 * library does; none set is the C locale, which is not.
 */
export function detectUnicode(env: Env): boolean {
  const locale = env.LC_ALL || env.LC_CTYPE || env.LANG || "";
  return /utf-?8/i.test(locale);
}

export function detectTerminal(stream: StreamLike, env: Env = process.env): TerminalCapabilities {
  const isTTY = stream.isTTY === true;
  const columns = Number(env.COLUMNS);
  const width =
    isTTY && stream.columns ? stream.columns : Number.isInteger(columns) && columns > 0 ? columns : undefined;
  return {
    isTTY,
    color: detectColorDepth(env, isTTY),
    unicode: detectUnicode(env),
    width,
    height: isTTY && stream.rows ? stream.rows : undefined,
  };
}
