import type { DelegationInput } from "../../engine/lifecycle/request.js";
import type { Scenario as ModelScript, Step } from "../../mock-model/scenario.js";
import { shellQuote as quote } from "../../support/shell-quote.js";
import type { Subject } from "./subject.js";

/**
 * The tasks the kit gives an agent. Each objective is plain enough for any model to follow and is written
 * in the reference agent's own instructions, so the bundled agent shows what passing looks like. For a
 * built-in CLI the kit also scripts the model (`caesar mock-model`) the way a model doing the task right
 * would answer — trying the write in read-only mode — so what is checked is what the CLI and its adapter do.
 */

export type ScenarioName = "basic" | "read-only" | "failure" | "deadline" | "unknown-field" | "question";

export interface ScenarioPlan {
  name: ScenarioName;
  /** The request's fields beside the agent. */
  request: Pick<DelegationInput, "objective" | "mode" | "isolation" | "timeout" | "channel">;
  /** The model's script, for a built-in CLI. */
  model: ModelScript;
  /** The kit answers the questions the agent asks with this text. */
  answer?: string;
  /** Run the program behind a probe that adds an unknown member to task.json. */
  probe?: boolean;
}

export interface ScenarioOptions {
  /** Each task's deadline (the deadline scenario's is its own). */
  timeout: string;
}

/** The deadline scenario's deadline: a program starts at once; a CLI needs its start-up first. */
const DEADLINE: Record<Subject["kind"], string> = { program: "4s", cli: "30s" };

/** The question the question scenario asks the agent to ask. */
export const QUESTION = "Which word should conformance/answer.txt hold?";

/** The scenarios this subject runs, each with fresh random tokens (`nonce()` makes one). */
export function planScenarios(
  subject: Subject,
  options: ScenarioOptions,
  nonce: () => string,
  wanted: ReadonlySet<ScenarioName>,
): ScenarioPlan[] {
  const plans: ScenarioPlan[] = [];
  const add = (plan: ScenarioPlan) => {
    if (wanted.has(plan.name)) plans.push(plan);
  };
  const write = { mode: "write" as const, isolation: "worktree" as const, timeout: options.timeout };

  const basic = nonce();
  add({
    name: "basic",
    request: { ...write, objective: createObjective(basic) },
    model: script("basic", [
      createStep(basic),
      ...reportSteps("success", `Created ${fileOf(basic)}.`, [basic]),
    ]),
  });

  const readOnly = nonce();
  add({
    name: "read-only",
    request: { ...write, mode: "read-only", objective: createObjective(readOnly) },
    model: script("read-only", [
      { write: { path: fileOf(readOnly), content: `${readOnly}\n` } },
      createStep(`${readOnly}-shell`),
      ...reportSteps("success", "Looked at the task; read-only, so nothing was changed.", []),
    ]),
  });

  const failure = nonce();
  add({
    name: "failure",
    request: {
      ...write,
      objective: `replace "${failure}" with "done" in conformance/missing-${failure}.txt`,
    },
    model: script("failure", [
      { shell: `cat conformance/missing-${failure}.txt`, description: "Read the file" },
      ...reportSteps("failed", `conformance/missing-${failure}.txt does not exist.`, []),
    ]),
  });

  const deadline = nonce();
  add({
    name: "deadline",
    request: {
      ...write,
      timeout: DEADLINE[subject.kind],
      objective: `wait 600 seconds; ${createObjective(deadline)}`,
    },
    // The model never answers: the CLI is still at work when the deadline passes.
    model: script("deadline", [{ hang: true }]),
  });

  if (subject.kind === "program") {
    const probed = nonce();
    add({
      name: "unknown-field",
      request: { ...write, objective: createObjective(probed) },
      model: script("unknown-field", [createStep(probed), ...reportSteps("success", "Created.", [probed])]),
      probe: true,
    });
  }

  const answer = nonce();
  add({
    name: "question",
    request: {
      ...write,
      ...(subject.channel ? { channel: true } : {}),
      objective: `ask "${QUESTION}" and write the answer to conformance/answer.txt`,
    },
    model: script("question", [
      { call: { tool: "ask_orchestrator", arguments: { question: QUESTION } } },
      {
        shell: `mkdir -p conformance && printf '%s\\n' ${quote("{{last_result}}")} > conformance/answer.txt`,
        description: "Write the answer",
      },
      ...reportSteps("success", "Wrote the answer to conformance/answer.txt.", ["answer"]),
    ]),
    answer,
  });
  return plans;
}

function createObjective(token: string): string {
  return `create ${fileOf(token)} containing "${token}"`;
}

function fileOf(token: string): string {
  return `conformance/${token}.txt`;
}

/**
 * Create a file with the shell tool: every CLI has one (codex 0.171's apply_patch cannot run with its home
 * under the temp directory, where it refuses to create its helper binaries).
 */
function createStep(token: string): Step {
  return {
    shell: `mkdir -p conformance && printf '%s\\n' ${token} > ${fileOf(token)}`,
    description: `Create ${fileOf(token)}`,
  };
}

/** Text as one word for a POSIX shell (single-quoted). */
/** The report, written to the report path the brief gives, then as the final answer. */
function reportSteps(status: "success" | "failed", summary: string, files: string[]): Step[] {
  const changes = files.map((token) => ({ path: fileOf(token), action: "added" as const }));
  const report = { protocol: "caesar.report/v1", task_id: "{{task_id}}", status, summary, changes };
  return [
    {
      shell: `printf '%s\\n' ${quote(JSON.stringify(report))} > {{report_path}}`,
      description: "Write the report",
    },
    { report: { status, summary, changes } },
  ];
}

function script(name: string, steps: Step[]): ModelScript {
  return { name: `conformance-${name}`, steps };
}
