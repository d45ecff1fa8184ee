import { rec, str } from "./stream-json.js";

/** Longest `input_summary` / `output_summary` an event carries: a line to read, not the tool's payload. */
export const SUMMARY_MAX = 240;

/** One line, at most `max` characters, ellipsis when cut. */
export function clip(text: string, max = SUMMARY_MAX): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

// Keys that say what a tool call does, most telling first (shell, file, search, web, MCP question).
const TELLING_KEYS = [
  "command",
  "cmd",
  "file_path",
  "filePath",
  "path",
  "absolute_path",
  "pattern",
  "query",
  "url",
  "question",
  "prompt",
  "description",
];

/**
 * What a tool was asked to do, in one line: the command of a shell tool (unwrapped from `bash -lc '…'`),
 * the path of a file tool, the pattern of a search; otherwise compact JSON.
 */
export function summarizeToolInput(input: unknown): string {
  if (typeof input === "string") return clip(unwrapShell(input));
  if (Array.isArray(input)) return clip(unwrapShell(input.map(String).join(" ")));
  const record = rec(input);
  for (const key of TELLING_KEYS) {
    const value = record[key];
    if (typeof value === "string" && value.trim() !== "") {
      return clip(key === "command" || key === "cmd" ? unwrapShell(value) : value);
    }
    if (Array.isArray(value) && value.length > 0) return clip(unwrapShell(value.map(String).join(" ")));
  }
  const json = JSON.stringify(input);
  return json === undefined || json === "{}" ? "" : clip(json);
}

/** `/bin/bash -lc 'echo OK > hello.txt'` → `echo OK > hello.txt`; anything else unchanged. */
export function unwrapShell(command: string): string {
  const match = /^(?:\S*\/)?(?:ba|z)?sh -l?c (['"])([\s\S]*)\1$/.exec(command.trim());
  if (!match) return command;
  const body = match[2]!;
  return match[1] === "'" ? body.replace(/'\\''/g, "'") : body.replace(/\\(["\\$`])/g, "$1");
}

/** The end of a tool's output, where results and errors usually are. */
export function summarizeOutput(output: unknown): string | undefined {
  const text = typeof output === "string" ? output : output === undefined ? "" : JSON.stringify(output);
  const lines = text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
  if (lines.length === 0) return undefined;
  const tail = lines.slice(-3).join(" ⏎ ");
  return tail.length <= SUMMARY_MAX ? tail : `…${tail.slice(tail.length - SUMMARY_MAX + 1)}`;
}

/** Text content of an MCP-style or Anthropic-style result (`[{type:"text",text}]`), else JSON. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map(
        (part) =>
          str(rec(part).text) ?? (rec(part).type === "tool_reference" ? str(rec(part).tool_name) : ""),
      )
      .filter(Boolean)
      .join("\n");
  }
  const record = rec(content);
  if ("content" in record) return contentText(record.content);
  return content === undefined || content === null ? "" : JSON.stringify(content);
}
