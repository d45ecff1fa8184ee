import type { ToolPreview } from "../../protocol/questions.js";
import { int, rec, str } from "../stream-json.js";
import { commandOf, type KnownToolCall } from "./tool-calls.js";

/** At most this many characters of texts and diffs in a preview: a question file stays small. */
const PREVIEW_CHARS = 200_000;

/**
 * The tool call a delegate asks permission for, as the person asked should see it: its kind, title,
 * locations and content — the diff it attached included (a terminal, the delegate's own, is left out).
 */
export function previewOf(call: KnownToolCall): ToolPreview {
  const content: NonNullable<ToolPreview["content"]> = [];
  let budget = PREVIEW_CHARS;
  const command = call.kind === "execute" ? commandOf(call) : undefined;
  if (command && !call.title.includes(command)) content.push({ type: "text", text: `$ ${command}` });
  for (const raw of call.content ?? []) {
    const item = rec(raw);
    if (item.type === "diff" && str(item.path)) {
      const oldText = typeof item.oldText === "string" ? item.oldText : null;
      const newText = typeof item.newText === "string" ? item.newText : "";
      budget -= (oldText?.length ?? 0) + newText.length;
      if (budget < 0) {
        content.push({ type: "text", text: `(the change to ${str(item.path)} is too large to show here)` });
        continue;
      }
      content.push({ type: "diff", path: str(item.path)!, old_text: oldText, new_text: newText });
    } else if (item.type === "content") {
      const text = str(rec(item.content).text);
      if (!text) continue;
      budget -= text.length;
      if (budget >= 0) content.push({ type: "text", text });
    }
  }
  const locations = (call.locations ?? [])
    .map((raw) => ({ path: str(rec(raw).path), line: int(rec(raw).line) }))
    .filter((location): location is { path: string; line: number | undefined } => Boolean(location.path))
    .map(({ path, line }) => (line === undefined || line < 0 ? { path } : { path, line }));
  return {
    id: call.id,
    title: call.title || command || call.kind,
    kind: call.kind,
    ...(locations.length > 0 ? { locations } : {}),
    ...(content.length > 0 ? { content } : {}),
  };
}
