import type { EventBody } from "../protocol/event.js";
import type { ChangeAction } from "../protocol/report.js";
import { rec, str } from "./stream-json.js";

// File-writing tools by CLI, and what they do: claude Write/Edit/MultiEdit/NotebookEdit, opencode
// write/edit, gemini write_file/replace, copilot create/edit. A whole-file write may create or replace:
// its action is left out (the event's action is a report's, added | modified | deleted | renamed).
const WRITE_TOOLS: Record<string, ChangeAction | null> = {
  Write: null,
  Edit: "modified",
  MultiEdit: "modified",
  NotebookEdit: "modified",
  write: null,
  edit: "modified",
  write_file: null,
  replace: "modified",
  create: "added",
};

const PATH_KEYS = ["file_path", "filePath", "path", "notebook_path", "absolute_path"];

/** A `file_changed` event for a file tool that succeeded (shell commands are seen by git, not here). */
export function fileChangedFor(tool: string, input: unknown): EventBody[] {
  const action = WRITE_TOOLS[tool];
  if (action === undefined) return [];
  const record = rec(input);
  for (const key of PATH_KEYS) {
    const path = str(record[key]);
    if (path) return [{ type: "file_changed", path, ...(action ? { action } : {}) }];
  }
  return [];
}
