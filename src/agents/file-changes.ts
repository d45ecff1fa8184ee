import type { EventBody } from "../protocol/event.js";
import { rec, str } from "./stream-json.js";

// File-writing tools by CLI, and what they do: claude Write/Edit/MultiEdit/NotebookEdit, opencode
// write/edit, gemini write_file/replace, copilot create/edit.
const WRITE_TOOLS: Record<string, string> = {
  Write: "written",
  Edit: "modified",
  MultiEdit: "modified",
  NotebookEdit: "modified",
  write: "written",
  edit: "modified",
  write_file: "written",
  replace: "modified",
  create: "added",
};

const PATH_KEYS = ["file_path", "filePath", "path", "notebook_path", "absolute_path"];

/** A `file_changed` event for a file tool that succeeded (shell commands are seen by git, not here). */
export function fileChangedFor(tool: string, input: unknown): EventBody[] {
  const action = WRITE_TOOLS[tool];
  if (!action) return [];
  const record = rec(input);
  for (const key of PATH_KEYS) {
    const path = str(record[key]);
    if (path) return [{ type: "file_changed", path, action }];
  }
  return [];
}
