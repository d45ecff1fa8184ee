/**
 * The frontmatter of a message: a `---` line, `key: value` lines, a `---` line, then the body.
 *
 * Written and read the way the reference implementation (`chat.py`) does, so that both tools see the
 * same fields in every file: values are written plain, never quoted (a quote would be read as part of
 * the value), with line breaks folded to spaces; a line is split at its first `:`, key and value
 * trimmed, a later line overriding an earlier one. The reader never throws: message files come from
 * other tools and other people.
 */

export type FrontmatterResult =
  | { ok: true; fields: Record<string, string>; body: string }
  | { ok: false; problem: string };

/** Split `text` into its frontmatter fields (values trimmed, as written) and its body. */
export function parseFrontmatter(text: string): FrontmatterResult {
  // A BOM is skipped (chat.py would not see the frontmatter behind one; caesar is lenient there).
  const normalized = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  const lines = normalized.split("\n");
  if (!lines[0]?.startsWith("---"))
    return { ok: false, problem: "does not start with a `---` frontmatter line" };
  const fields: Record<string, string> = {};
  for (let index = 1; index < lines.length; index++) {
    const line = lines[index]!;
    const trimmed = line.trim();
    if (trimmed === "---") return { ok: true, fields, body: lines.slice(index + 1).join("\n") };
    const colon = line.indexOf(":");
    // A line without `:` (a YAML list item, a continuation) or a comment is ignored, not fatal.
    if (colon === -1 || trimmed.startsWith("#")) continue;
    const key = line.slice(0, colon).trim();
    if (key !== "") fields[key] = line.slice(colon + 1).trim();
  }
  return { ok: false, problem: "has no closing `---` line after its frontmatter" };
}

/**
 * A structured value (`seq`, `from`, `to`, `reply_to`, `ts`, `channel`, `status`) without a YAML-style
 * trailing comment (`bob   # the reviewer`), as the spec's own example writes them.
 */
export function stripComment(value: string): string {
  const index = value.search(/\s#/);
  return (index === -1 ? value : value.slice(0, index)).trim();
}

/**
 * A name as written in `from` or `to`: a whole value in matching quotes (`"no"`, written by older
 * caesar versions and by YAML tools) is unquoted. Unambiguous, since no valid agent name starts or ends
 * with a quote.
 */
export function unquoteName(raw: string): string {
  const match = /^"(.*)"$|^'(.*)'$/.exec(raw);
  if (!match) return raw;
  if (match[2] !== undefined) return match[2].replace(/''/g, "'");
  try {
    return JSON.parse(raw) as string;
  } catch {
    return match[1]!;
  }
}

/** A value as written after `key: `: on one line, as chat.py writes it (line breaks become spaces). */
export function formatValue(value: string): string {
  return value.replace(/[\r\n]+/g, " ");
}

/** A message file's text: the frontmatter (entries in order, undefined ones left out), then the body. */
export function formatFrontmatter(entries: [string, string | number | undefined][], body: string): string {
  let text = "---\n";
  for (const [key, value] of entries) {
    if (value !== undefined) text += `${key}: ${typeof value === "number" ? value : formatValue(value)}\n`;
  }
  text += "---\n";
  return body === "" || body.endsWith("\n") ? text + body : `${text + body}\n`;
}
