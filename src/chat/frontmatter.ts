/**
 * The frontmatter of a message: a `---` line, simple `key: value` lines, a `---` line, then the body.
 * Written as plain lines (quoted only where a YAML reader would misread the value); read leniently,
 * because message files come from other implementations and other people: the reader never throws.
 */

export type FrontmatterResult =
  | { ok: true; fields: Record<string, string>; body: string }
  | { ok: false; problem: string };

const KEY = /^([A-Za-z_][A-Za-z0-9_-]*)\s*:(?:\s+(.*))?$/;

/** Split `text` into its frontmatter fields (values unquoted, keys as written) and its body. */
export function parseFrontmatter(text: string): FrontmatterResult {
  const normalized = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  const lines = normalized.split("\n");
  if (lines[0]?.trimEnd() !== "---")
    return { ok: false, problem: "does not start with a `---` frontmatter line" };
  const fields: Record<string, string> = {};
  for (let index = 1; index < lines.length; index++) {
    const line = lines[index]!;
    if (line.trimEnd() === "---" || line.trimEnd() === "...") {
      return { ok: true, fields, body: lines.slice(index + 1).join("\n") };
    }
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    const match = KEY.exec(line);
    // A line that is not `key: value` (a YAML list item, a continuation) is ignored, not fatal.
    if (!match) continue;
    const key = match[1]!;
    if (!Object.hasOwn(fields, key)) fields[key] = unquote((match[2] ?? "").trim());
  }
  return { ok: false, problem: "has no closing `---` line after its frontmatter" };
}

/** The value of a quoted scalar (`"…"` with JSON escapes, `'…'` with `''`), else `raw` as is. */
function unquote(raw: string): string {
  if (raw.startsWith('"')) {
    const end = closingDoubleQuote(raw);
    if (end > 0) {
      try {
        return JSON.parse(raw.slice(0, end + 1)) as string;
      } catch {
        return raw.slice(1, end);
      }
    }
    return raw;
  }
  if (raw.startsWith("'")) {
    const match = /^'((?:[^']|'')*)'/.exec(raw);
    return match ? match[1]!.replace(/''/g, "'") : raw;
  }
  return raw;
}

function closingDoubleQuote(raw: string): number {
  for (let index = 1; index < raw.length; index++) {
    if (raw[index] === "\\") index++;
    else if (raw[index] === '"') return index;
  }
  return -1;
}

/** A plain value with a YAML-style trailing comment (`bob   # the reviewer`) removed. */
export function stripComment(value: string): string {
  const index = value.search(/\s#/);
  return (index === -1 ? value : value.slice(0, index)).trim();
}

// Plain scalars a YAML reader would take for something else, or cut short.
const NEEDS_QUOTES =
  /^[\s"'[\]{}>|*&!%@`#,?:-]|^(true|false|yes|no|on|off|null|~)$|\s$|: |:$| #|[\u0000-\u001f\u007f]/i;

/** `value` as written after `key: `: plain when a YAML reader would read it back unchanged, else quoted. */
export function formatValue(value: string): string {
  return NEEDS_QUOTES.test(value) || value === "" ? JSON.stringify(value) : value;
}

/** A message file's text: the frontmatter (entries in order, undefined ones left out), then the body. */
export function formatFrontmatter(entries: [string, string | number | undefined][], body: string): string {
  const lines = ["---"];
  for (const [key, value] of entries) {
    if (value === undefined) continue;
    lines.push(`${key}: ${typeof value === "number" ? String(value) : formatValue(value)}`);
  }
  lines.push("---");
  const text = body === "" || body.endsWith("\n") ? body : `${body}\n`;
  return `${lines.join("\n")}\n${text}`;
}
