import { relative } from "node:path";
import type { ContextUsage, EventBody, PlanStep } from "../../protocol/event.js";
import type { ChangeAction } from "../../protocol/report.js";
import type { ProcessExit, StreamOutcome } from "../adapter.js";
import { list, num, rec, str } from "../stream-json.js";
import { StreamState } from "../stream-state.js";
import type { PermissionVerdict } from "./permission-policy.js";
import { commandOf, type KnownToolCall, ToolCalls, toolNameOf, toolSummaryOf } from "./tool-calls.js";
import { isInside } from "./workspace-fs.js";

/** The end of a running tool's output an output update carries. */
const LIVE_OUTPUT_CHARS = 8 * 1024;
/** At most this many output updates per tool call: a command that floods shows its end when it ends. */
const MAX_OUTPUT_UPDATES = 200;

/** Output of a failed tool that says an OS sandbox refused a write (codex's read-only sandbox). */
const SANDBOX_REFUSAL = /Read-only file system|Operation not permitted/i;

/**
 * Turns an ACP session into caesar.event/v1: `session/update` notifications (tool calls started and
 * ended by id, plans, message and thought chunks, diffs), caesar's own decisions on permissions and files,
 * and the prompt's result (usage, stop reason). Every member is untrusted input.
 */
export class SessionEvents {
  readonly state = new StreamState();
  readonly calls = new ToolCalls();
  private message = "";
  private messageId: string | undefined;
  private thought = "";
  private readonly changed = new Set<string>();
  /** The output last relayed of each running tool call, and how many updates it had. */
  private readonly liveOutput = new Map<string, { text: string; updates: number }>();

  constructor(private readonly workspace: string) {}

  update(raw: unknown): EventBody[] {
    const update = rec(raw);
    const kind = str(update.sessionUpdate);
    if (kind === "agent_message_chunk") return this.messageChunk(update);
    if (kind === "agent_thought_chunk") {
      const events = this.flushMessage();
      this.thought += textOf(update.content);
      return events;
    }
    const events = this.flush();
    switch (kind) {
      case "tool_call":
      case "tool_call_update":
        events.push(...this.toolCall(update));
        break;
      case "plan":
        events.push(...planProgress(update));
        break;
      case "notice": {
        const title = str(update.title) ?? "";
        const message = [title, str(update.message) ?? ""].filter(Boolean).join(": ");
        if (str(update.severity) === "error") events.push(...this.state.errorEvent(message || "notice"));
        else if (message) events.push({ type: "progress", message: message.slice(0, 2000) });
        break;
      }
      case "usage_update":
        events.push(...this.usage(update));
        break;
      // Echoes of the prompt, the agent's commands, modes, titles: nothing a watcher needs.
      default:
        break;
    }
    return events;
  }

  /**
   * The agent's own `usage_update`: its cost (the report's `cost_usd`) and, when it states both, how full
   * its context window is — a progress a front end relays (an editor: its own `usage_update`).
   */
  private usage(update: Record<string, unknown>): EventBody[] {
    const cost = rec(update.cost);
    const amount = num(cost.amount);
    const usd = amount !== undefined && amount >= 0 && str(cost.currency) === "USD" ? amount : undefined;
    if (usd !== undefined) this.state.setUsage({ cost_usd: usd });
    const used = num(update.used);
    const size = num(update.size);
    if (used === undefined || size === undefined || used < 0 || size <= 0) return [];
    if (!Number.isSafeInteger(Math.round(used)) || !Number.isSafeInteger(Math.round(size))) return [];
    const usage: ContextUsage = {
      used_tokens: Math.round(used),
      window_tokens: Math.round(size),
      ...(usd !== undefined ? { cost_usd: usd } : {}),
    };
    const spent = usd !== undefined ? `, $${usd.toFixed(4)} so far` : "";
    return [
      {
        type: "progress",
        message: `Context: ${usage.used_tokens} of ${usage.window_tokens} tokens${spent}`,
        usage,
      },
    ];
  }

  /** A permission the agent asked for, and what caesar's policy (or a person) answered. */
  permission(call: KnownToolCall, verdict: PermissionVerdict): EventBody[] {
    const events = this.flush();
    const tool = toolNameOf(call);
    const summary = toolSummaryOf(call);
    const what = `${tool}${summary ? ` ${summary}` : ""}`;
    events.push({
      type: "progress",
      message: `Permission ${verdict.allow ? "granted" : "refused"}: ${what} (${verdict.reason})`.slice(
        0,
        2000,
      ),
    });
    if (verdict.allow) {
      // The call runs now: a watcher sees it start (some agents send no `tool_call` before asking).
      events.push(...this.state.tools.start(call.id, tool, summary));
    } else {
      this.state.denied(tool, `${summary || call.title}: ${verdict.reason}`, `denied\n${call.id}`);
      events.push(
        ...this.state.tools.end(call.id, {
          ok: false,
          tool,
          input: summary,
          output: `refused by caesar: ${verdict.reason}`,
        }),
      );
    }
    return events;
  }

  /** caesar refused a file access the agent asked of its client (`fs/*`). */
  refusedFile(method: string, path: string, reason: string): EventBody[] {
    this.state.addFinding(
      { severity: "high", title: `Refused ${method} outside the workspace`, detail: `${path}: ${reason}` },
      `fs\n${method}\n${path}`,
    );
    return [{ type: "progress", message: `Refused ${method} ${path}: ${reason}`.slice(0, 2000) }];
  }

  /** The file the agent wrote through caesar (`fs/write_text_file`). */
  wroteFile(path: string): EventBody[] {
    // A whole-file write: whether it added or modified the file is git's to say (no action).
    return this.fileChanged(path, undefined);
  }

  /** Token counts from a prompt's result: `usage` (ACP) or gemini's `_meta.quota.token_count`. */
  promptResult(raw: unknown): void {
    const result = rec(raw);
    const usage = rec(result.usage);
    const quota = rec(rec(rec(result._meta).quota).token_count);
    const input = num(usage.inputTokens) ?? num(quota.input_tokens);
    const output = num(usage.outputTokens) ?? num(quota.output_tokens);
    this.state.addUsage(input, output);
  }

  /** Text and thoughts still being accumulated. */
  flush(): EventBody[] {
    const events = this.flushMessage();
    if (this.thought.trim() !== "") events.push({ type: "thinking", text: this.thought.slice(0, 16 * 1024) });
    this.thought = "";
    return events;
  }

  outcome(exit: ProcessExit): StreamOutcome {
    return this.state.outcome(exit, this.flush());
  }

  private messageChunk(update: Record<string, unknown>): EventBody[] {
    const id = str(update.messageId);
    // A new message id starts a new message; chunks without ids belong to the current one.
    const events =
      id !== undefined && this.messageId !== undefined && id !== this.messageId ? this.flush() : [];
    if (id !== undefined) this.messageId = id;
    if (this.thought) events.push(...this.flushThought());
    this.message += textOf(update.content);
    return events;
  }

  private flushThought(): EventBody[] {
    const text = this.thought;
    this.thought = "";
    return text.trim() === "" ? [] : [{ type: "thinking", text: text.slice(0, 16 * 1024) }];
  }

  private flushMessage(): EventBody[] {
    const text = this.message;
    this.message = "";
    this.messageId = undefined;
    return this.state.message(text);
  }

  private toolCall(update: Record<string, unknown>): EventBody[] {
    const call = this.calls.merge(update);
    if (!call) return [];
    const status = str(update.status);
    const tool = toolNameOf(call);
    const summary = toolSummaryOf(call);
    if (status !== "completed" && status !== "failed") {
      // Started once it runs, or once its input is known: claude-agent-acp never says `in_progress`, and
      // a call it runs without asking would otherwise show only when it is over. A call then refused
      // ends as failed.
      const started =
        status === "in_progress" || isInputKnown(call) ? this.state.tools.start(call.id, tool, summary) : [];
      return [...started, ...this.output(call.id, update)];
    }
    const output = outputOf(update);
    const ok = status === "completed";
    if (!ok && SANDBOX_REFUSAL.test(output)) {
      this.state.denied(tool, `${summary}: ${output}`, `denied\n${call.id}`);
    }
    const events = this.state.tools.end(call.id, { ok, tool, input: summary, output });
    if (ok)
      for (const diff of call.diffs)
        events.push(...this.fileChanged(diff.path, diff.oldText ? "modified" : "added"));
    return events;
  }

  /**
   * What a running call printed so far (opencode streams a command's output as the call's content while
   * it runs): an output update, each replacing the last, for a front end to show live (an editor: the
   * tool call's content). Only for a call that runs, and only when the text changed.
   */
  private output(id: string, update: Record<string, unknown>): EventBody[] {
    if (!this.state.tools.isOpen(id)) return [];
    const text = outputOf({ content: update.content });
    if (text === "") return [];
    const last = this.liveOutput.get(id) ?? { text: "", updates: 0 };
    const tail = text.slice(-LIVE_OUTPUT_CHARS);
    if (tail === last.text || last.updates >= MAX_OUTPUT_UPDATES) return [];
    this.liveOutput.set(id, { text: tail, updates: last.updates + 1 });
    const lastLine = tail.trimEnd().split("\n").at(-1) ?? "";
    return [
      {
        type: "progress",
        message: `Output of ${id} so far: ${lastLine}`.slice(0, 500),
        output: { tool_id: id, text: tail },
      },
    ];
  }

  private fileChanged(path: string, action: ChangeAction | undefined): EventBody[] {
    const shown = isInside(this.workspace, path) ? relative(this.workspace, path) : path;
    // Once per file: a write through caesar (no action) and the diff of the tool that made it are one
    // change, and git's reconciliation says what it was in the end.
    if (this.changed.has(shown)) return [];
    this.changed.add(shown);
    return [{ type: "file_changed", path: shown, ...(action ? { action } : {}) }];
  }
}

/** Enough of a call's input to say what it does: its command, its paths, or any other member. */
function isInputKnown(call: KnownToolCall): boolean {
  if (call.kind === "execute") return commandOf(call) !== undefined;
  if (call.paths.length > 0) return true;
  // opencode announces every call with only its working directory.
  return Object.keys(rec(call.rawInput)).some((key) => key !== "cwd");
}

/** Text of a content block (text, or a resource's text); other blocks say what they are. */
function textOf(raw: unknown): string {
  const block = rec(raw);
  if (block.type === "text") return str(block.text) ?? "";
  if (block.type === "resource") return str(rec(block.resource).text) ?? "";
  if (block.type === "resource_link") return str(block.uri) ?? "";
  return "";
}

/** What a finished tool said: its content's text, else its raw output. */
function outputOf(update: Record<string, unknown>): string {
  const texts = list(update.content)
    .map((item) => rec(item))
    .filter((item) => item.type === "content")
    .map((item) => textOf(item.content))
    .filter(Boolean);
  if (texts.length > 0) return texts.join("\n");
  const raw = update.rawOutput;
  if (typeof raw === "string") return raw;
  const record = rec(raw);
  return str(record.formatted_output) ?? str(record.output) ?? str(record.error) ?? str(record.content) ?? "";
}

/** A plan becomes a progress line: how many steps are done, and the one under way. */
/** A plan longer than this is cut: each step is a line an editor shows. */
const MAX_PLAN_STEPS = 100;

function planProgress(update: Record<string, unknown>): EventBody[] {
  const entries = list(update.entries).map((entry) => rec(entry));
  if (entries.length === 0) return [];
  const done = entries.filter((entry) => entry.status === "completed").length;
  const current =
    entries.find((entry) => entry.status === "in_progress") ?? entries.find((e) => e.status !== "completed");
  const steps = entries
    .map(
      (entry) =>
        `${entry.status === "completed" ? "[x]" : entry.status === "in_progress" ? "[>]" : "[ ]"} ${str(entry.content) ?? ""}`,
    )
    .join("; ");
  const lead = current ? `: ${str(current.content) ?? ""}` : "";
  // The steps themselves too, so that a front end can show the plan as one (an editor: an ACP plan).
  const plan = entries.slice(0, MAX_PLAN_STEPS).map(
    (entry): PlanStep => ({
      content: (str(entry.content) ?? "").slice(0, 500),
      status: entry.status === "completed" || entry.status === "in_progress" ? entry.status : "pending",
    }),
  );
  return [
    {
      type: "progress",
      message: `Plan ${done}/${entries.length}${lead} — ${steps}`.slice(0, 2000),
      pct: Math.round((done / entries.length) * 100),
      plan,
    },
  ];
}
