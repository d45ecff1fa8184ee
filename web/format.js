// @ts-check
// Words for what the server sends: times, statuses, and one line per caesar.event/v1 (like `caesar logs`).

/** @typedef {import("../src/api/response-schema.js").TaskSummary} TaskSummary */
/** @typedef {import("../src/protocol/event.js").CaesarEvent} CaesarEvent */

/** @param {string | undefined} iso */
export function formatTime(iso) {
  if (iso === undefined) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso ?? "");
  return date.toLocaleTimeString([], { hour12: false });
}

/**
 * @param {string} iso
 * @param {number} [now]
 */
export function formatAge(iso, now = Date.now()) {
  const ms = now - new Date(iso).getTime();
  if (!Number.isFinite(ms)) return "";
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

/**
 * One word for where a task is: its phase while it runs, else how it ended.
 * @param {TaskSummary} task
 * @returns {string}
 */
export function describeStatus(task) {
  if (task.phase !== "finished") return task.waitingForSlot ? "waiting" : task.phase;
  if (task.outcome === "succeeded") return task.reportStatus ?? "done";
  return task.outcome ?? "failed";
}

/**
 * A task's checks in a few characters (`✓ 2/2`, `✗ 1/2`), and whether they all passed; null without checks.
 * @param {TaskSummary["checks"]} checks
 * @returns {{ text: string, passed: boolean } | null}
 */
export function describeChecks(checks) {
  if (!checks || checks.state === "none") return null;
  const passed = checks.state === "passed";
  return { text: `${passed ? "✓" : "✗"} ${checks.passed}/${checks.total}`, passed };
}

/**
 * [label, text] for one event; null when its line is gone.
 * @param {CaesarEvent | null} event
 * @returns {[string, string]}
 */
export function describeEvent(event) {
  if (!event || typeof event !== "object") return ["?", "(this line of events.jsonl is gone)"];
  switch (event.type) {
    case "started":
      return ["start", `${event.agent ?? ""}${event.command ? ` — ${event.command}` : ""}`];
    case "thinking":
      return ["think", event.text];
    case "message":
      return ["agent", event.text];
    case "tool_use": {
      const detail = event.status === "started" ? event.input_summary : event.output_summary;
      const timing = typeof event.duration_ms === "number" ? ` (${event.duration_ms} ms)` : "";
      return ["tool", `${event.tool} ${event.status}${timing}${detail ? ` — ${detail}` : ""}`];
    }
    case "file_changed":
      return ["file", `${event.action ?? "changed"} ${event.path}`];
    case "progress":
      return ["progress", `${event.message}${typeof event.pct === "number" ? ` (${event.pct}%)` : ""}`];
    case "question":
      return ["question", event.question];
    case "answer":
      return ["answer", `${event.answer}${event.by ? ` (by ${event.by})` : ""}`];
    case "error":
      return ["error", `${event.message}${event.code ? ` [${event.code}]` : ""}`];
    case "finished":
      // An agent's own `finished` (the server marks it by: "agent") is its word, not the task's end.
      if (event.by === "agent")
        return [
          "agent",
          `says finished: ${event.status}${event.summary ? ` — ${event.summary}` : ""} (not the task's end)`,
        ];
      return [
        "finish",
        `${event.status}${event.outcome ? ` / ${event.outcome}` : ""}${event.summary ? ` — ${event.summary}` : ""}`,
      ];
    default: {
      // A type this page does not know yet (a newer server): shown as it came.
      const other = /** @type {{ type?: unknown }} */ (event);
      return [String(other.type ?? "?"), JSON.stringify(other)];
    }
  }
}

/**
 * A duration: `850ms`, `6.2s`, `45s`, `3m59s`, `1h05m` (as the terminal shows it).
 * @param {number} ms
 */
export function formatDuration(ms) {
  const total = Math.max(0, ms);
  if (total < 1000) return `${Math.floor(total)}ms`;
  if (total < 10_000) return `${(Math.floor(total / 100) / 10).toFixed(1)}s`;
  const seconds = Math.floor(total / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}
