/**
 * Human output of `caesar query`. Everything shown comes from agents and repositories: control characters
 * are made visible, so no text can drive the terminal (escape sequences, carriage returns).
 */

export function visible(text: unknown): string {
  return String(text ?? "").replace(
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

interface TimelineResult {
  entries: {
    position: number;
    at: string;
    actor: string;
    type: string;
    taskId: string;
    changeNumber: number | null;
    data: Record<string, unknown> | null;
  }[];
  nextBefore: number | null;
}

export function renderTimeline(result: TimelineResult): string {
  if (result.entries.length === 0) return "No entries.";
  const lines = result.entries.map((entry) => {
    const text = describeData(entry.type, entry.data);
    return [
      String(entry.position).padStart(6),
      entry.at.slice(0, 19).replace("T", " "),
      visible(entry.actor).padEnd(10),
      entry.taskId,
      `#${entry.changeNumber ?? "?"}`.padEnd(5),
      entry.type.padEnd(12),
      visible(text).split("\n")[0]!.slice(0, 120),
    ].join("  ");
  });
  if (result.nextBefore !== null) lines.push(`… more: --before ${result.nextBefore}`);
  return lines.join("\n");
}

function describeData(type: string, data: Record<string, unknown> | null): string {
  if (!data) return "";
  const pick = (...keys: string[]) =>
    keys
      .map((key) => data[key])
      .filter((value) => typeof value === "string" && value !== "")
      .join(" — ");
  switch (type) {
    case "tool_use":
      return `${data.tool ?? ""} ${data.status ?? ""} ${pick("input_summary", "output_summary")}`.trim();
    case "file_changed":
      return `${data.action ?? "changed"} ${data.path ?? ""}`;
    case "apply":
      return `applied ${Array.isArray(data.files) ? data.files.length : 0} file(s) (by ${data.by ?? "?"})`;
    case "cancel":
      return `cancel requested (by ${data.by ?? "?"})`;
    default:
      return pick("text", "message", "question", "answer", "summary", "agent", "status");
  }
}

interface RepositoryResult {
  id: string;
  kind: string;
  path: string | null;
  head?: string | null;
  branch?: string | null;
  worktrees?: {
    id: string;
    changeNumber: number | null;
    branch: string | null;
    exists: boolean;
    changeStatus: string;
  }[];
  snapshot: {
    of: string;
    tree: string;
    fileCount: number;
    truncated: boolean;
    files: { path: string; size: number | null }[];
  } | null;
  snapshotUnavailable?: string;
}

export function renderRepository(r: RepositoryResult): string {
  const lines = [`repository ${visible(r.id)} (${r.kind})`, `path       ${visible(r.path)}`];
  if (r.branch) lines.push(`branch     ${visible(r.branch)}`);
  if (r.head) lines.push(`head       ${r.head}`);
  for (const w of r.worktrees ?? []) {
    lines.push(
      `worktree   ${w.id}  #${w.changeNumber ?? "?"}  ${w.changeStatus}${w.exists ? "" : " (removed)"}  ${visible(w.branch ?? "")}`,
    );
  }
  if (r.snapshot) {
    lines.push(
      `snapshot   ${r.snapshot.of} ${r.snapshot.tree.slice(0, 12)}: ${r.snapshot.fileCount} file(s)${r.snapshot.truncated ? " (list truncated)" : ""}`,
    );
    for (const file of r.snapshot.files.slice(0, 50))
      lines.push(`           ${String(file.size ?? "-").padStart(8)}  ${visible(file.path)}`);
    if (r.snapshot.files.length > 50)
      lines.push(`           … ${r.snapshot.fileCount - 50} more (--json lists them)`);
  } else lines.push(`snapshot   unavailable: ${visible(r.snapshotUnavailable ?? "")}`);
  return lines.join("\n");
}

interface ChangeResult {
  number: number;
  taskId: string;
  title: string;
  status: string;
  agent: string;
  phase: string;
  outcome: string | null;
  branch: string | null;
  report: { status: string; summary: string; report_source: string; changes_verified_by: string } | null;
  findings: { severity: string; title: string; file?: string }[];
  diff: {
    origin: string;
    files: { path: string; action: string }[];
    patch: string;
    truncated: boolean;
  } | null;
  diffUnavailable: string | null;
}

export function renderChange(c: ChangeResult): string {
  const lines = [
    `change #${c.number}  ${c.taskId}  ${c.status}`,
    `title      ${visible(c.title)}`,
    `agent      ${visible(c.agent)} · ${c.phase}${c.outcome ? ` (${c.outcome})` : ""}${c.branch ? ` · ${visible(c.branch)}` : ""}`,
  ];
  if (c.report) {
    lines.push(
      `report     ${c.report.status} — from ${c.report.report_source}; changes verified by ${c.report.changes_verified_by}`,
    );
    lines.push(`summary    ${visible(c.report.summary)}`);
  }
  for (const f of c.findings)
    lines.push(`finding    [${f.severity}] ${visible(f.title)}${f.file ? ` (${visible(f.file)})` : ""}`);
  if (c.diff) {
    lines.push(
      `diff       verified by git (${c.diff.origin}), ${c.diff.files.length} file(s)${c.diff.truncated ? ", truncated" : ""}`,
    );
    for (const file of c.diff.files) lines.push(`           ${file.action.padEnd(9)}${visible(file.path)}`);
    if (c.diff.patch !== "") lines.push("", visible(c.diff.patch.replace(/\n$/, "")));
  } else lines.push(`diff       unavailable: ${visible(c.diffUnavailable ?? "")}`);
  return lines.join("\n");
}
