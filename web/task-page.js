// @ts-check
// One task: header and actions (Apply / Cancel), pending questions with a form, the report and its
// findings, the verified diff, and the event stream — live, resuming after reconnects without losing or
// repeating an event (the server's ids are the events' ordinals; EventSource sends Last-Event-ID).
import { ApiError, errorText, followTask, getTask, getTaskDiff, mutate } from "./api.js";
import { showDelegation } from "./delegation-view.js";
import { renderPatch } from "./diff-view.js";
import { h, replace } from "./dom.js";
import { describeEvent, describeStatus, formatTime } from "./format.js";

/** @typedef {import("./api.js").StreamStatus} StreamStatus */
/** @typedef {import("./api.js").MutationOperation} MutationOperation */
/**
 * @template {MutationOperation} O
 * @typedef {import("./api.js").MutationArguments<O>} MutationArguments
 */
/** @typedef {import("../src/api/response-schema.js").TaskPage} TaskPage */
/** @typedef {import("../src/api/response-schema.js").TaskQuestion} TaskQuestion */
/** @typedef {import("../src/api/response-schema.js").TaskEventMessage} TaskEventMessage */
/** @typedef {import("../src/protocol/report.js").NormalizedReport} NormalizedReport */

/**
 * Show task `id` in `view`, live; returns what stops it.
 * @param {HTMLElement} view
 * @param {string} id
 * @param {(state: StreamStatus) => void} status
 * @returns {() => void}
 */
export function showTaskPage(view, id, status) {
  /** @type {TaskPage | undefined} the last `task` message: summary, report, questions, runId, revision */
  let current;
  let lastOrdinal = 0;
  let diffKey = "";
  /** @type {string | undefined} */
  let questionsKey;

  const header = h("div", { class: "task-header", "data-testid": "task-header" });
  const actions = h("div", { class: "actions" });
  const notice = h("p", { class: "note", role: "status", "data-testid": "notice" });
  const questions = h("section", { class: "questions", "data-testid": "questions" });
  const delegation = h("section", { class: "delegation", "data-testid": "delegation" });
  const report = h("section", { class: "report", "data-testid": "report" });
  const findings = h("section", { class: "findings", "data-testid": "findings" });
  const checks = h("section", { class: "checks", "data-testid": "checks" });
  const diff = h(
    "section",
    { class: "changes", "data-testid": "changes" },
    h("h3", {}, "Verified diff"),
    h("p", { class: "muted" }, "Loading…"),
  );
  const events = h("ol", { class: "events", "data-testid": "events" });

  const applyButton = h(
    "button",
    {
      "data-testid": "apply",
      onclick: () =>
        act("change.apply", (task) => (task.changeNumber === null ? null : { number: task.changeNumber })),
    },
    "Apply",
  );
  const cancelButton = h(
    "button",
    {
      "data-testid": "cancel",
      class: "danger",
      onclick: () => act("task.cancel", () => ({ task_id: id })),
    },
    "Cancel",
  );
  actions.append(applyButton, cancelButton);

  replace(
    view,
    h("p", {}, h("a", { href: "#/" }, "← All tasks")),
    header,
    actions,
    notice,
    questions,
    delegation,
    report,
    checks,
    findings,
    diff,
    h("section", {}, h("h3", {}, "Events"), events),
  );

  /**
   * Run a mutation based on what the page shows; report the outcome; never retry a conflict.
   * @template {MutationOperation} O
   * @param {O} operation
   * @param {(task: TaskPage["task"]) => MutationArguments<O> | null} args null: not possible for this task
   */
  async function act(operation, args) {
    if (!current) return;
    const request = args(current.task);
    if (request === null) return;
    notice.textContent = "Working…";
    notice.dataset.kind = "pending";
    try {
      await mutate(operation, request, { runId: current.runId, revision: current.revision });
      notice.textContent =
        operation === "change.apply"
          ? "Applied: the change is staged in your working tree."
          : operation === "task.cancel"
            ? "Cancelled."
            : "Answered.";
      notice.dataset.kind = "ok";
    } catch (error) {
      notice.textContent =
        error instanceof ApiError && error.status === 409
          ? `Conflict: ${error.message} The page shows the current state now; review it and try again.`
          : errorText(error);
      notice.dataset.kind = "error";
      notice.dataset.code = error instanceof ApiError ? error.code : "error";
    }
  }

  /** @param {TaskPage} message */
  function renderTask(message) {
    current = message;
    const task = message.task;
    const state = describeStatus(task);
    replace(
      header,
      h(
        "h2",
        {},
        `#${task.changeNumber ?? "?"} `,
        h("span", { class: "mono" }, task.id),
        " ",
        h("span", { class: `badge ${state}`, "data-testid": "status" }, state),
      ),
      h(
        "p",
        { class: "meta" },
        `${task.agent}${task.role ? ` (role ${task.role})` : ""} · ${task.mode} · ${task.isolation}${task.branch ? ` · ${task.branch}` : ""}${task.worker ? ` · on worker ${task.worker}` : ""}`,
      ),
      h("pre", { class: "objective", "data-testid": "objective" }, task.objective),
      task.error ? h("p", { class: "error" }, task.error.message) : null,
      task.applied
        ? h(
            "p",
            { class: "ok", "data-testid": "applied" },
            `Applied ${task.applied.at} (${task.applied.files.length} file(s)).`,
          )
        : null,
    );
    applyButton.disabled = !(
      task.phase === "finished" &&
      task.changeStatus === "ready" &&
      task.changeNumber !== null
    );
    cancelButton.disabled = task.phase === "finished";
    // Re-render the questions only when they change: never under the user's fingers while they type.
    const asked = JSON.stringify(message.questions.map((q) => [q.id, q.answer?.answeredAt ?? null]));
    if (asked !== questionsKey) {
      questionsKey = asked;
      renderQuestions(message.questions);
    }
    renderReport(message.report);
    // The diff changes only with the task's state: fetch it again when the task finishes or is applied.
    const key = `${task.phase}|${task.applied?.at ?? ""}`;
    if (key !== diffKey) {
      diffKey = key;
      void loadDiff();
    }
  }

  /** @param {TaskQuestion[]} list */
  function renderQuestions(list) {
    const pending = list.filter((q) => q.answer === null);
    /** @type {{ question: string, answer: NonNullable<TaskQuestion["answer"]> }[]} */
    const answered = [];
    for (const q of list) if (q.answer !== null) answered.push({ question: q.question, answer: q.answer });
    if (list.length === 0) return replace(questions);
    replace(
      questions,
      h("h3", {}, pending.length > 0 ? `Questions waiting for you (${pending.length})` : "Questions"),
      pending.map((q) => {
        const input = h("textarea", { rows: "2", name: "answer", "data-testid": "answer-input" });
        /** @param {string} text */
        const send = (text) =>
          act("question.answer", () => ({ task_id: id, question_id: q.id, answer: text }));
        return h(
          "form",
          {
            class: "question",
            dataset: { questionId: q.id },
            "data-testid": "question",
            onsubmit: (event) => {
              event.preventDefault();
              void send(input.value);
            },
          },
          h("p", { class: "text" }, q.question),
          q.options
            ? h(
                "p",
                {},
                q.options.map((option) =>
                  h("button", { type: "button", class: "option", onclick: () => send(option) }, option),
                ),
              )
            : null,
          input,
          h("button", { type: "submit", "data-testid": "answer-submit" }, "Answer"),
        );
      }),
      answered.map(({ question, answer }) =>
        h(
          "div",
          { class: "question answered", "data-testid": "answered" },
          h("p", { class: "text" }, question),
          h(
            "p",
            {},
            "→ ",
            h("strong", {}, answer.answer),
            ` (${answer.answeredBy ?? "?"}, ${formatTime(answer.answeredAt)})`,
          ),
        ),
      ),
    );
  }

  /** @param {NormalizedReport | null} value */
  function renderReport(value) {
    if (!value) {
      replace(report, h("h3", {}, "Report"), h("p", { class: "muted" }, "No report yet."));
      replace(findings);
      replace(checks);
      return;
    }
    renderChecks(value);
    replace(
      report,
      h("h3", {}, "Report"),
      h(
        "p",
        {},
        h("span", { class: `badge ${value.status}` }, value.status),
        ` from ${value.report_source}; changes verified by ${value.changes_verified_by}`,
      ),
      h("p", { class: "summary", "data-testid": "summary" }, value.summary),
      value.details ? h("pre", { class: "details" }, value.details) : null,
      value.changes.length > 0
        ? h(
            "ul",
            { class: "files" },
            value.changes.map((c) =>
              h("li", {}, h("span", { class: `action ${c.action}` }, c.action), " ", c.path),
            ),
          )
        : null,
      value.next_steps.length > 0
        ? h(
            "div",
            {},
            h("h4", {}, "Next steps"),
            h(
              "ul",
              {},
              value.next_steps.map((step) => h("li", {}, step)),
            ),
          )
        : null,
    );
    replace(
      findings,
      h("h3", {}, `Findings (${value.findings.length})`),
      value.findings.length === 0
        ? h("p", { class: "muted" }, "None.")
        : h(
            "ul",
            {},
            value.findings.map((f) =>
              h(
                "li",
                { class: `finding ${f.severity}`, "data-testid": "finding" },
                h("span", { class: `badge ${f.severity}` }, f.severity),
                " ",
                h("strong", {}, f.title),
                f.file ? ` — ${f.file}${f.line !== undefined ? `:${f.line}` : ""}` : "",
                f.detail ? h("pre", {}, f.detail) : null,
              ),
            ),
          ),
    );
  }

  /**
   * caesar's checks after the last attempt: each command, whether it passed, and the end of a failure.
   * @param {NormalizedReport} value
   */
  function renderChecks(value) {
    const list = value.checks ?? [];
    if (list.length === 0) return replace(checks);
    const passed = list.filter((c) => c.passed).length;
    const attempts = value.attempts ?? [];
    replace(
      checks,
      h(
        "h3",
        {},
        "Checks ",
        h(
          "span",
          {
            class: `badge ${passed === list.length ? "success" : "failed"}`,
            "data-testid": "checks-verdict",
          },
          `${passed}/${list.length} passed`,
        ),
      ),
      attempts.length > 1
        ? h(
            "p",
            { class: "meta", "data-testid": "attempts" },
            `${attempts.length} attempts: `,
            attempts.map((a) => `${a.attempt} ${a.checks_passed ? "✓" : "✗"} ${a.how}`).join(" · "),
          )
        : null,
      h(
        "ul",
        {},
        list.map((c) =>
          h(
            "li",
            { class: `check ${c.passed ? "passed" : "failed"}`, "data-testid": "check" },
            h("span", { class: `badge ${c.passed ? "success" : "failed"}` }, c.passed ? "passed" : "failed"),
            " ",
            h("code", {}, c.command),
            ` ${c.error ?? `exit ${c.exit_code}`} · ${c.duration_ms} ms`,
            !c.passed && c.output_tail ? h("pre", {}, c.output_tail) : null,
          ),
        ),
      ),
    );
  }

  async function loadDiff() {
    try {
      const body = await getTaskDiff(id);
      const title = h(
        "h3",
        {},
        "Verified diff",
        body.origin ? h("span", { class: "muted" }, ` (git, ${body.origin})`) : "",
      );
      if (!body.diff) return replace(diff, title, h("p", { class: "muted" }, body.unavailable ?? "No diff."));
      replace(
        diff,
        title,
        body.diff.truncated
          ? h("p", { class: "muted" }, "The patch is long: only its beginning is shown.")
          : null,
        await renderPatch(body.diff.patch),
      );
    } catch (error) {
      replace(diff, h("h3", {}, "Verified diff"), h("p", { class: "error" }, errorText(error)));
    }
  }

  /**
   * @param {TaskEventMessage} message
   * @param {MessageEvent<string>} raw
   */
  function addEvent(message, raw) {
    const ordinal = Number(raw.lastEventId || message.ordinal);
    if (ordinal <= lastOrdinal) return; // already shown (never expected: the server resumes after Last-Event-ID)
    const gap = ordinal !== lastOrdinal + 1;
    lastOrdinal = ordinal;
    const [label, text] = describeEvent(message.event);
    events.append(
      h(
        "li",
        {
          class: `event ${label}`,
          dataset: { ordinal: String(ordinal), ...(gap ? { gap: "true" } : {}) },
          "data-testid": "event",
        },
        h("span", { class: "ordinal" }, String(ordinal)),
        h("span", { class: "time" }, formatTime(message.event?.at)),
        h("span", { class: "label" }, label),
        h("span", { class: "text" }, text ?? ""),
      ),
    );
  }

  const stopDelegation = showDelegation(delegation, id);
  const stopTask = followTask(id, { caesar: addEvent, task: renderTask }, (state) => {
    status(state);
    if (state === "closed")
      getTask(id).catch((error) => {
        notice.textContent = errorText(error);
        notice.dataset.kind = "error";
      });
  });
  return () => {
    stopDelegation();
    stopTask();
  };
}
