import type { TaskState } from "../engine/state.js";
import type { CaesarEvent } from "../protocol/event.js";

/**
 * Renders a task for `caesar run` while it runs: one line per event, then the end summary.
 * (A first, plain version; the terminal theme replaces it.)
 */
export interface RunRenderer {
  waiting(holders: { task_id: string; pid: number; since: string }[]): void;
  event(event: CaesarEvent): void;
  finished(state: TaskState): void;
}

export interface RunRendererOptions {
  out: NodeJS.WritableStream;
  taskId: string;
}

const LABEL_WIDTH = 9;

export function createRunRenderer(options: RunRendererOptions): RunRenderer {
  const { out } = options;
  const line = (label: string, text: string) => out.write(`${label.padEnd(LABEL_WIDTH)}${text}\n`);
  const toolStarts = new Map<string, number>();
  return {
    waiting(holders) {
      line("wait", `all slots busy: ${holders.map((h) => `${h.task_id} (pid ${h.pid})`).join(", ")}`);
    },
    event(event) {
      switch (event.type) {
        case "started":
          line("start", `${event.agent}${event.command ? ` — ${event.command}` : ""}`);
          break;
        case "tool_use": {
          const key = event.id || `${event.tool}:${event.input_summary ?? ""}`;
          if (event.status === "started") {
            toolStarts.set(key, Date.parse(event.at));
            line("tool", `${event.tool} ${event.input_summary ?? ""}`.trim());
          } else {
            const began = toolStarts.get(key);
            const took = began === undefined ? "" : ` (${Date.parse(event.at) - began} ms)`;
            line("tool", `${event.tool || "…"} ${event.status}${took}`);
          }
          break;
        }
        case "message":
          line("agent", event.text);
          break;
        case "thinking":
          line("think", event.text);
          break;
        case "file_changed":
          line("file", `${event.action ?? "changed"} ${event.path}`);
          break;
        case "progress":
          line("progress", `${event.pct === undefined ? "" : `${event.pct}% `}${event.message}`);
          break;
        case "question":
          line(
            "question",
            `${event.question}  →  caesar answer ${options.taskId} ${event.question_id} "<answer>"`,
          );
          break;
        case "answer":
          line("answer", event.answer);
          break;
        case "error":
          line("error", event.message);
          break;
        case "finished":
          line("done", `${event.status}${event.summary ? ` — ${event.summary}` : ""}`);
          break;
      }
    },
    finished(state) {
      const report = state.report;
      out.write("\n");
      if (!report) {
        line("result", state.error?.message ?? "no report");
        return;
      }
      line(
        "status",
        `${report.status} (report from ${report.report_source}; process ${state.outcome ?? "?"})`,
      );
      line("summary", report.summary);
      if (report.changes.length > 0) {
        line("changes", `${report.changes.length} file(s), verified by ${report.changes_verified_by}`);
        for (const change of report.changes) line("", `${change.action.padEnd(9)}${change.path}`);
      }
      for (const finding of report.findings) line("finding", `[${finding.severity}] ${finding.title}`);
      if (state.worktree && report.changes.length > 0) {
        line("next", `caesar diff ${state.id}   ·   caesar apply ${state.id}`);
      }
    },
  };
}
