#!/usr/bin/env node
// caesar's reference agent: a small, conformant OACP v1 agent with no model behind it.
// It reads $CAESAR_TASK_FILE, narrates its work in $CAESAR_EVENTS_PATH, does what the objective says
// when the objective uses one of three plain instructions, and writes $CAESAR_REPORT_PATH.
//
//   create <path> containing "<text>"
//   append "<text>" to <path>
//   replace "<old>" with "<new>" in <path>
//
// Several instructions may be joined with ";". Anything else is reported as `blocked`, honestly.
// Set CAESAR_REFERENCE_DELAY_MS to slow each step down (for demos of `caesar watch`).
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, normalize, relative } from "node:path";

const startedAt = Date.now();
const task = JSON.parse(readFileSync(process.env.CAESAR_TASK_FILE, "utf8"));
const eventsPath = process.env.CAESAR_EVENTS_PATH;
const delay = Number(process.env.CAESAR_REFERENCE_DELAY_MS ?? 0);
let seq = 1000; // the orchestrator continues its own numbering after ours
let callId = 0;

function emit(body) {
  if (!eventsPath) return;
  const event = {
    protocol: "caesar.event/v1",
    seq: seq++,
    at: new Date().toISOString(),
    task_id: task.id,
    ...body,
  };
  appendFileSync(eventsPath, `${JSON.stringify(event)}\n`);
}
function pause() {
  if (delay > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, delay);
}
function unquote(text) {
  const t = text.trim();
  return /^(["'`]).*\1$/s.test(t) ? t.slice(1, -1) : t;
}
function insideWorkspace(path) {
  const absolute = normalize(isAbsolute(path) ? path : join(task.workspace, path));
  const rel = relative(task.workspace, absolute);
  if (rel.startsWith("..") || isAbsolute(rel)) throw new Error(`${path} is outside the workspace`);
  return { absolute, rel };
}
function writeAtomic(path, content) {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.caesar-ref.tmp`;
  writeFileSync(temp, content);
  renameSync(temp, path);
}

const INSTRUCTIONS = [
  {
    re: /^create\s+(\S+)\s+containing\s+([\s\S]+)$/i,
    run: ([, path, text]) => {
      const { absolute, rel } = insideWorkspace(path);
      const existed = existsSync(absolute);
      writeAtomic(absolute, `${unquote(text)}\n`);
      return { path: rel, action: existed ? "modified" : "added", summary: `wrote ${rel}` };
    },
  },
  {
    re: /^append\s+([\s\S]+?)\s+to\s+(\S+)$/i,
    run: ([, text, path]) => {
      const { absolute, rel } = insideWorkspace(path);
      const existed = existsSync(absolute);
      const before = existed ? readFileSync(absolute, "utf8") : "";
      writeAtomic(absolute, `${before}${unquote(text)}\n`);
      return { path: rel, action: existed ? "modified" : "added", summary: `appended to ${rel}` };
    },
  },
  {
    re: /^replace\s+([\s\S]+?)\s+with\s+([\s\S]+?)\s+in\s+(\S+)$/i,
    run: ([, from, to, path]) => {
      const { absolute, rel } = insideWorkspace(path);
      const before = readFileSync(absolute, "utf8");
      const old = unquote(from);
      if (!before.includes(old)) throw new Error(`${JSON.stringify(old)} does not occur in ${rel}`);
      writeAtomic(absolute, before.split(old).join(unquote(to)));
      return { path: rel, action: "modified", summary: `replaced ${JSON.stringify(old)}` };
    },
  },
];

const steps = task.objective
  .split(/;|\n/)
  .map((s) => s.trim())
  .filter(Boolean);
emit({ type: "thinking", text: `Reading the task: ${steps.length} instruction(s), mode ${task.mode}.` });
pause();

const changes = [];
const commands = [];
const findings = [];
let blocked;

for (const step of steps) {
  const match = INSTRUCTIONS.map((i) => [i, step.match(i.re)]).find(([, m]) => m);
  if (!match) {
    blocked = step;
    break;
  }
  if (task.mode === "read-only") {
    findings.push({ severity: "info", title: `Not done in read-only mode: ${step}` });
    continue;
  }
  const id = `call_${++callId}`;
  emit({ type: "tool_use", tool: "edit_file", id, input_summary: step, status: "started" });
  pause();
  try {
    const change = match[0].run(match[1]);
    changes.push(change);
    emit({ type: "tool_use", tool: "edit_file", id, input_summary: step, status: "succeeded" });
    emit({ type: "file_changed", path: change.path, action: change.action });
  } catch (error) {
    emit({ type: "tool_use", tool: "edit_file", id, input_summary: step, status: "failed" });
    emit({ type: "error", message: error.message });
    findings.push({ severity: "high", title: `Could not ${step}`, detail: error.message });
  }
}

// Check the JavaScript it touched, with a real process, the way an agent runs its tests.
for (const change of changes.filter((c) => /\.(m?js|cjs)$/.test(c.path))) {
  const id = `call_${++callId}`;
  const command = `node --check ${change.path}`;
  emit({ type: "tool_use", tool: "shell", id, input_summary: command, status: "started" });
  pause();
  const run = spawnSync(process.execPath, ["--check", change.path], {
    cwd: task.workspace,
    encoding: "utf8",
  });
  commands.push({ command, exit_code: run.status });
  emit({
    type: "tool_use",
    tool: "shell",
    id,
    input_summary: command,
    status: run.status === 0 ? "succeeded" : "failed",
    exit_code: run.status,
  });
  if (run.status !== 0)
    findings.push({ severity: "high", title: `${change.path} does not parse`, detail: run.stderr.trim() });
}

const failed = findings.some((f) => f.severity === "high");
const status = blocked ? "blocked" : failed ? "failed" : "success";
const summary = blocked
  ? `Stopped at an instruction the reference agent does not understand: ${JSON.stringify(blocked)}.`
  : task.mode === "read-only"
    ? `Read-only task: looked at ${steps.length} instruction(s), changed nothing.`
    : `${changes.length} file(s) changed: ${changes.map((c) => c.path).join(", ") || "none"}.`;
emit({ type: "message", text: summary });

const report = {
  protocol: "caesar.report/v1",
  task_id: task.id,
  status,
  summary,
  changes,
  commands_run: commands,
  findings,
  questions: blocked
    ? [
        {
          id: "q1",
          question:
            'The reference agent understands: create <path> containing "<text>"; append "<text>" to <path>; replace "<old>" with "<new>" in <path>. Rephrase?',
        },
      ]
    : [],
  next_steps: blocked
    ? ["Rephrase the objective with a supported instruction, or use a real agent (--agent codex, claude, …)."]
    : [],
  usage: { duration_ms: Date.now() - startedAt },
};
writeAtomic(process.env.CAESAR_REPORT_PATH, `${JSON.stringify(report, null, 2)}\n`);
