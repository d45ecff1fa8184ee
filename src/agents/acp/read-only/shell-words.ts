/** The little of shell syntax the read-only check reads: one `sh -c` word, chains, quoted words. */

/**
 * `bash -lc '…'` and `sh -c "…"` run their argument: judge that — only when it is one quoted word (no
 * quote of its kind inside, no escape), else `bash -c 'ls '; touch ' x'` would be judged as `ls`.
 */
export function unwrap(command: string): string {
  const match = /^(?:\S*\/)?(?:ba|z)?sh\s+-l?c\s+(['"])([\s\S]*)\1$/.exec(command);
  if (!match) return command;
  const inner = match[2]!;
  return inner.includes(match[1]!) || inner.includes("\\") ? command : inner;
}

/** Split on a separator outside quotes; undefined when quotes do not close. */
export function splitOutsideQuotes(text: string, separator: RegExp): string[] | undefined {
  const parts: string[] = [];
  let current = "";
  let quote: string | undefined;
  for (const char of text) {
    if (quote) {
      if (char === quote) quote = undefined;
      current += char;
    } else if (char === "\\") {
      // Outside quotes a backslash escapes the next character (a quote, a separator): the shell would
      // not split where this parser does. Refused rather than reproduced.
      return undefined;
    } else if (char === "'" || char === '"') {
      quote = char;
      current += char;
    } else if (separator.test(char)) {
      parts.push(current);
      current = "";
    } else current += char;
  }
  if (quote) return undefined;
  parts.push(current);
  return parts;
}

export function splitWords(text: string): string[] | undefined {
  const words: string[] = [];
  let current = "";
  let quote: string | undefined;
  let started = false;
  for (const char of text) {
    if (quote) {
      if (char === quote) quote = undefined;
      else current += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      started = true;
    } else if (/\s/.test(char)) {
      if (started) words.push(current);
      current = "";
      started = false;
    } else {
      current += char;
      started = true;
    }
  }
  if (quote) return undefined;
  if (started) words.push(current);
  return words;
}
