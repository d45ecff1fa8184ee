import { constants, existsSync, readFileSync } from "node:fs";
import { lstat, mkdir, open } from "node:fs/promises";
import { join } from "node:path";
import { followTask } from "../../engine/follow/follow.js";
import { answerTask } from "../../engine/lifecycle/answer-task.js";
import { cancelTask } from "../../engine/lifecycle/cancel.js";
import { resolvePlan } from "../../engine/lifecycle/plan.js";
import { parseDelegationRequest } from "../../engine/lifecycle/request.js";
import { startTask } from "../../engine/lifecycle/start.js";
import { pendingQuestions } from "../../engine/questions/questions.js";
import type { TaskState } from "../../engine/store/state.js";
import { readTaskTextOrNothing } from "../../engine/store/task-files.js";
import type { TaskRecord } from "../../engine/store/task-store.js";
import { mockSetupFor, writeSetupFiles } from "../../mock-model/agent-env.js";
import { ScenarioSchema } from "../../mock-model/scenario.js";
import { type MockModelServer, startMockModel } from "../../mock-model/server.js";
import { formatProblem } from "../../protocol/documents.js";
import { taskPaths } from "../../protocol/task-dir.js";
import { validateText } from "../../protocol/validate-file.js";
import { CaesarError } from "../../support/errors.js";
import { probeIdOf } from "./kit-repo.js";
import type { ScenarioPlan } from "./scenarios.js";
import type { Subject } from "./subject.js";

/** What one scenario left behind, read from the task's files and caesar's record of it. */
export interface Evidence {
  plan: ScenarioPlan;
  taskId: string;
  /** The task directory. */
  dir: string;
  state: TaskState;
  /** `report.json` as the agent wrote it: absent, or valid, or its problems. */
  reportFile: { present: false } | { present: true; valid: boolean; problems: string[]; raw: unknown };
  /** events.jsonl: its problems, and the events that are the agent's (not caesar's own). */
  events: { problems: string[]; agentEvents: Record<string, unknown>[] };
  /** The content of each file git saw changed (the first 64 KiB). */
  changed: Record<string, string>;
  /** The ids of the questions the kit answered. */
  answered: string[];
  /** The bodies of the requests the CLI sent its (scripted) model. */
  modelRequests: string[];
}

export interface ScenarioRun {
  repo: string;
  /** Where CLI homes and model logs go. */
  stateDir: string;
  /** Aborted (Ctrl-C): the task is cancelled, and the run rejects. */
  signal: AbortSignal;
}

/** Run one scenario as a task of the kit's repository, through caesar's engine, and gather its evidence. */
export async function runScenario(run: ScenarioRun, subject: Subject, plan: ScenarioPlan): Promise<Evidence> {
  const stateDir = join(run.stateDir, plan.name);
  await mkdir(stateDir, { recursive: true });
  const modelLog = join(stateDir, "model-requests.jsonl");
  let server: MockModelServer | undefined;
  const restore: Record<string, string | undefined> = {};
  try {
    if (subject.kind === "cli") {
      server = await startMockModel({
        scenario: ScenarioSchema.parse(plan.model),
        logFile: modelLog,
        logBodies: true,
      });
      const setup = mockSetupFor(subject.agent, server.url, stateDir);
      await writeSetupFiles(setup);
      // The task's agent inherits this process's environment (engine/conductor/task-env.ts).
      for (const [name, value] of Object.entries(setup.env)) {
        restore[name] = process.env[name];
        process.env[name] = value;
      }
    }
    const request = parseDelegationRequest({
      ...plan.request,
      agent: plan.probe ? probeIdOf(subject) : subject.agent,
      requested_by: "conformance",
      on: "local",
    });
    const { plan: taskPlan } = await resolvePlan(request, { root: run.repo });
    const record = await startTask(taskPlan);
    const answerer = plan.answer === undefined ? undefined : answerQuestions(record, plan.answer);
    const state = await followTask(record.id, record.dir, {}, run.signal).finally(() => answerer?.stop());
    if (state.phase !== "finished") {
      await cancelTask(record, "caesar conformance");
      throw new CaesarError(
        "conformance_interrupted",
        `Interrupted: ${record.id} (${plan.name}) was cancelled.`,
        {
          detail: "Run caesar conformance again for a scorecard; nothing of this run was kept.",
        },
      );
    }
    return {
      plan,
      taskId: record.id,
      dir: record.dir,
      state,
      reportFile: await readReportFile(record.dir),
      events: await readEvents(record.dir, state),
      changed: await readChanged(state),
      answered: answerer?.answered ?? [],
      modelRequests: existsSync(modelLog) ? readModelBodies(modelLog) : [],
    };
  } finally {
    await server?.close();
    for (const [name, value] of Object.entries(restore)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/** Answer every question the task asks with `text`, as a person would with `caesar answer`. */
function answerQuestions(record: TaskRecord, text: string): { answered: string[]; stop(): void } {
  const answered: string[] = [];
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void (async () => {
      for (const question of await pendingQuestions(record.dir)) {
        await answerTask(record, question.id, text, "caesar conformance");
        answered.push(question.id);
      }
    })()
      .catch(() => undefined)
      .finally(() => {
        busy = false;
      });
  }, 200);
  return {
    answered,
    stop: () => clearInterval(timer),
  };
}

async function readReportFile(dir: string): Promise<Evidence["reportFile"]> {
  const path = taskPaths(dir).report;
  // Through the one opener of task files: the agent under test may have left a link or a FIFO there.
  const text = await readTaskTextOrNothing(path);
  if (text === undefined) return { present: false };
  const validation = validateText(path, text);
  const problems = validation.problems.map(formatProblem);
  if (validation.kind !== "report" && validation.valid)
    problems.push(`$.protocol: a ${validation.kind}, not a report`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    raw = undefined;
  }
  return { present: true, valid: problems.length === 0, problems, raw };
}

/**
 * The events file's problems, and the events the agent (or, for a CLI, its adapter) wrote: every valid
 * line but caesar's own `started` (the first line) and its closing events (`state.final_events`).
 */
async function readEvents(dir: string, state: TaskState): Promise<Evidence["events"]> {
  const path = taskPaths(dir).events;
  const text = await readTaskTextOrNothing(path);
  if (text === undefined) return { problems: [], agentEvents: [] };
  const validation = validateText(path, text);
  const problems = validation.problems.map(formatProblem);
  const closingSeq = state.final_events?.seq ?? Number.POSITIVE_INFINITY;
  const agentEvents: Record<string, unknown>[] = [];
  const lines = text.split("\n");
  lines.forEach((line, index) => {
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    if (index === 0 && event.type === "started") return;
    if (typeof event.seq === "number" && event.seq >= closingSeq) return;
    if (event.type === "answer") return; // the kit's answer, written by caesar
    agentEvents.push(event);
  });
  return { problems, agentEvents };
}

async function readChanged(state: TaskState): Promise<Record<string, string>> {
  const changed: Record<string, string> = {};
  if (state.report?.changes_verified_by !== "git") return changed;
  for (const change of state.report.changes) {
    const path = join(state.workspace, change.path);
    try {
      // Never through a link, never waiting on a FIFO the agent left: a regular file, its first 64 KiB.
      if (!(await lstat(path)).isFile()) continue;
      const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      try {
        if (!(await handle.stat()).isFile()) continue;
        const buffer = Buffer.alloc(65_536);
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
        changed[change.path] = buffer.subarray(0, bytesRead).toString("utf8");
      } finally {
        await handle.close();
      }
    } catch {
      // deleted, or unreadable: nothing to look into
    }
  }
  return changed;
}

function readModelBodies(log: string): string[] {
  return readFileSync(log, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      try {
        return JSON.stringify((JSON.parse(line) as { body?: unknown }).body ?? "");
      } catch {
        return "";
      }
    });
}
