#!/usr/bin/env node
// caesar's reference agent: a small, conformant OACP v1 agent with no model behind it.
// It reads $CAESAR_TASK_FILE, narrates its work in $CAESAR_EVENTS_PATH, does what the objective says
// when the objective uses these plain instructions, and writes $CAESAR_REPORT_PATH.
//
//   create <path> containing "<text>"
//   append "<text>" to <path>
//   replace "<old>" with "<new>" in <path>
//   ask "<question>" and write the answer to <path>   (questions/<id>.json, then waits for answers/<id>.json)
//   wait <n> seconds                                    (a long step: for deadlines and cancellation)
//
// Several instructions may be joined with ";". Anything else is reported as `blocked`, honestly. It exits 1
// when it reports `failed`, 0 otherwise.
// Set CAESAR_REFERENCE_DELAY_MS to slow each step down (for demos of `caesar watch`).
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
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
function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
function pause() {
  if (delay > 0) sleep(delay);
}
/** Ask through the task directory's files, as OACP's return channel does, and wait for the answer. */
function ask(question) {
  const id = `q_${randomBytes(4).toString("hex")}`;
  const dir = process.env.CAESAR_TASK_DIR ?? dirname(process.env.CAESAR_TASK_FILE);
  const asked = {
    protocol: "caesar.question/v1",
    id,
    task_id: task.id,
    question,
    asked_at: new Date().toISOString(),
  };
  writeAtomic(join(dir, "questions", `${id}.json`), `${JSON.stringify(asked, null, 2)}\n`);
  emit({ type: "question", question_id: id, question });
  const answerPath = join(dir, "answers", `${id}.json`);
  const until = task.deadline_ms ? startedAt + task.deadline_ms : Date.now() + 300_000;
  while (Date.now() < until) {
    if (existsSync(answerPath)) return JSON.parse(readFileSync(answerPath, "utf8")).answer;
    sleep(100);
  }
  throw new Error(`no answer to ${id} before the deadline`);
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
  {
    tool: "ask",
    re: /^ask\s+([\s\S]+?)\s+and\s+write\s+the\s+answer\s+to\s+(\S+)$/i,
    run: ([, question, path]) => {
      const { absolute, rel } = insideWorkspace(path);
      const existed = existsSync(absolute);
      const answer = ask(unquote(question));
      writeAtomic(absolute, `${answer}\n`);
      return { path: rel, action: existed ? "modified" : "added", summary: `wrote the answer to ${rel}` };
    },
  },
  {
    tool: "wait",
    re: /^wait\s+(\d+)\s+seconds?$/i,
    run: ([, seconds]) => {
      sleep(Number(seconds) * 1000);
      return undefined;
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
  const tool = match[0].tool ?? "edit_file";
  emit({ type: "tool_use", tool, id, input_summary: step, status: "started" });
  pause();
  try {
    const change = match[0].run(match[1]);
    emit({ type: "tool_use", tool, id, input_summary: step, status: "succeeded" });
    if (change) {
      changes.push(change);
      emit({ type: "file_changed", path: change.path, action: change.action });
    }
  } catch (error) {
    emit({ type: "tool_use", tool, id, input_summary: step, status: "failed" });
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
            'The reference agent understands: create <path> containing "<text>"; append "<text>" to <path>; replace "<old>" with "<new>" in <path>; ask "<question>" and write the answer to <path>; wait <n> seconds. Rephrase?',
        },
      ]
    : [],
  next_steps: blocked
    ? ["Rephrase the objective with a supported instruction, or use a real agent (--agent codex, claude, …)."]
    : [],
  usage: { duration_ms: Date.now() - startedAt },
};
writeAtomic(process.env.CAESAR_REPORT_PATH, `${JSON.stringify(report, null, 2)}\n`);
process.exitCode = status === "failed" ? 1 : 0;
