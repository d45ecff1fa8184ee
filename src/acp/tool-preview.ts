import type { ToolCallContent, ToolCallLocation, ToolKind } from "@agentclientprotocol/sdk";
import type { ToolPreview } from "../protocol/questions.js";
import type { CheckoutPaths } from "./checkout-paths.js";

const KINDS = new Set<string>([
  "read",
  "edit",
  "delete",
  "move",
  "search",
  "execute",
  "think",
  "fetch",
  "switch_mode",
  "other",
]);

/**
 * The delegate's tool call, as a question's preview carries it, in ACP's words (id prefixed by the task's),
 * its paths the user's checkout's (where the change lands), not the worktree's.
 */
export function toolCallOfPreview(taskId: string, tool: ToolPreview, paths: CheckoutPaths) {
  const content: ToolCallContent[] = (tool.content ?? []).map((item) =>
    item.type === "diff"
      ? { type: "diff", path: paths.file(item.path), oldText: item.old_text, newText: item.new_text }
      : { type: "content", content: { type: "text", text: paths.text(item.text) } },
  );
  const locations: ToolCallLocation[] = (tool.locations ?? []).map((location) => ({
    ...location,
    path: paths.file(location.path),
  }));
  return {
    toolCallId: `${taskId}:${tool.id}`,
    title: paths.text(tool.title),
    kind: (KINDS.has(tool.kind) ? tool.kind : "other") as ToolKind,
    ...(locations.length > 0 ? { locations } : {}),
    ...(content.length > 0 ? { content } : {}),
  };
}
