import { beforeAll, describe, expect, it } from "vitest";
import type { CaesarEvent } from "../../src/protocol/event.js";
import { displayWidth } from "../../src/ui/text.js";
import { makeTheme } from "../../src/ui/theme.js";
import {
  FINISHED_LINGER_MS,
  renderWatchScreen,
  SILENCE_MS,
  type WatchedTask,
  type WatchScreenOptions,
} from "../../src/ui/watch/screen.js";
import { makeWatchedTask, SCENARIO_NOW, scenarioTasks } from "./watch-fixtures.js";

beforeAll(() => {
  // The header shows the local time: pin the zone so the expected screens hold anywhere.
  process.env.TZ = "UTC";
});

const plain = makeTheme({ color: 0, unicode: true });
const T0 = Date.parse("2026-11-30T12:00:00.000Z");

function at(ms: number): string {
  return new Date(T0 + ms).toISOString();
}

function event(ms: number, body: Record<string, unknown>): CaesarEvent {
  return { protocol: "caesar.event/v1", seq: 0, task_id: "t_1", at: at(ms), ...body } as CaesarEvent;
}

function screen(tasks: WatchedTask[], now: number, options: Partial<WatchScreenOptions> = {}): string[] {
  return renderWatchScreen(tasks, { theme: plain, width: 100, now: T0 + now, ...options });
}

const started = event(0, { type: "started", agent: "codex" });

describe("caesar watch's screen: expected screens", () => {
  for (const width of [60, 100]) {
    for (const [locale, unicode] of [
      ["utf8", true],
      ["c", false],
    ] as const) {
      it(`four tasks at ${width} columns, ${locale} locale`, async () => {
        const lines = renderWatchScreen(scenarioTasks(), {
          theme: makeTheme({ color: 0, unicode }),
          width,
          now: SCENARIO_NOW,
          interactive: true,
        });
        await expect(`${lines.join("\n")}\n`).toMatchFileSnapshot(
          `../fixtures/ui/screens/watch/scenario.${width}.${locale}.txt`,
        );
        for (const line of lines) expect(displayWidth(line), line).toBeLessThanOrEqual(width);
        if (!unicode) expect(lines.join("\n")).toMatch(/^[\x20-\x7e\n]*$/);
      });
    }
  }
});

describe("caesar watch's screen", () => {
  it("shows per task its id, agent, age, mode and isolation, and objective", () => {
    const task = makeWatchedTask(
      { id: "t_1", agent: "codex", objective: "Fix the login test", mode: "read-only" },
      [started],
    );
    const lines = screen([task], 5_000);
    expect(lines[2]).toMatch(/^● t_1 {2}codex · 5\.0s · read-only · worktree +● running$/);
    expect(lines[3]).toBe("  Fix the login test");
  });

  it("shows a tool as soon as it starts, and for how long it has run", () => {
    const task = makeWatchedTask({ id: "t_1" }, [
      started,
      event(1000, { type: "tool_use", tool: "bash", id: "c1", input_summary: "npm test", status: "started" }),
    ]);
    expect(screen([task], 4_000)[4]).toBe("  ▸ bash  npm test · 3.0s");
  });

  it("prefers the running tool, else what the agent last said, else the last tool", () => {
    const events = [
      started,
      event(1000, { type: "tool_use", tool: "bash", id: "c1", input_summary: "ls", status: "started" }),
      event(2000, { type: "tool_use", tool: "", id: "c1", status: "succeeded" }),
    ];
    const headline = (list: CaesarEvent[]) => screen([makeWatchedTask({ id: "t_1" }, list)], 5_000)[4];
    expect(headline(events)).toBe("  ✓ bash  ls · 1.0s");
    const said = [...events, event(3000, { type: "message", text: "Looking at the\nsession store" })];
    expect(headline(said)).toBe("  “Looking at the session store”");
    const running = [
      ...said,
      event(4000, { type: "tool_use", tool: "Read", id: "c2", input_summary: "a.ts", status: "started" }),
    ];
    expect(headline(running)).toBe("  ▸ Read  a.ts · 1.0s");
    expect(headline([started])).toBe("  no event yet");
  });

  it("displays silence past 30 seconds without an event, and not before", () => {
    const task = makeWatchedTask({ id: "t_1" }, [
      started,
      event(1000, {
        type: "tool_use",
        tool: "bash",
        id: "c1",
        input_summary: "sleep 600",
        status: "started",
      }),
    ]);
    expect(screen([task], 1000 + SILENCE_MS - 1000).join("\n")).not.toContain("silent");
    const lines = screen([task], 1000 + 95_000);
    expect(lines[0]).toContain("1 silent");
    expect(lines[2]).toMatch(/! silent 1m35s$/);
    expect(lines[4]).toBe("  ▸ bash  sleep 600 · 1m35s");
  });

  it("counts silence from the start when an agent emits nothing at all", () => {
    const task = makeWatchedTask({ id: "t_1", started_at: at(0) }, []);
    expect(screen([task], 45_000)[2]).toMatch(/! silent 45s$/);
  });

  it("puts a pending question above everything, with the command that answers it", () => {
    const quiet = makeWatchedTask({ id: "t_quiet", started_at: at(0) }, [started]);
    const asking = makeWatchedTask({ id: "t_asks", started_at: at(10_000) }, [
      event(10_000, { type: "started", agent: "claude" }),
      event(20_000, {
        type: "question",
        question_id: "q_1",
        question: "Which database?",
        options: ["pg", "sqlite"],
      }),
    ]);
    const lines = screen([quiet, asking], 30_000);
    expect(lines.slice(2, 6)).toEqual([
      "? t_asks asks  q_1 · 10s ago",
      "  Which database?",
      "  options pg | sqlite",
      '  answer → caesar answer t_asks q_1 "<text>"',
    ]);
    // and its task comes first, before one that started earlier
    expect(lines.findIndex((l) => l.includes("t_asks  "))).toBeLessThan(
      lines.findIndex((l) => l.includes("t_quiet")),
    );
  });

  it("treats a question as pending until an answer event or an answers/ file exists", () => {
    const question = event(1000, { type: "question", question_id: "q_1", question: "Which database?" });
    const answer = event(2000, { type: "answer", question_id: "q_1", answer: "pg" });
    const pending = (task: WatchedTask) => screen([task], 5000).join("\n").includes("caesar answer");
    expect(pending(makeWatchedTask({ id: "t_1" }, [started, question]))).toBe(true);
    expect(pending(makeWatchedTask({ id: "t_1" }, [started, question, answer]))).toBe(false);
    expect(pending(makeWatchedTask({ id: "t_1" }, [started, question], { answeredIds: ["q_1"] }))).toBe(
      false,
    );
    const file = { id: "q_2", question: "Asked through the channel?", askedAt: T0 + 1000 };
    expect(pending(makeWatchedTask({ id: "t_1" }, [started], { fileQuestions: [file] }))).toBe(true);
    expect(
      pending(makeWatchedTask({ id: "t_1" }, [started], { fileQuestions: [file], answeredIds: ["q_2"] })),
    ).toBe(false);
  });

  it("keeps a finished task a few minutes with its report status, then lets it go (unless named)", () => {
    const finished = (named: boolean) =>
      makeWatchedTask(
        {
          id: "t_done",
          phase: "finished",
          started_at: at(0),
          finished_at: at(60_000),
          outcome: "succeeded",
          report_status: "partial",
        },
        [started, event(60_000, { type: "finished", status: "partial", summary: "Half of it" })],
        { named },
      );
    const soon = screen([finished(false)], 60_000 + FINISHED_LINGER_MS - 1000);
    expect(soon[2]).toMatch(/^! t_done {2}codex · took 1m00s · write · worktree +! partial$/);
    expect(soon[4]).toBe("  Half of it  finished 4m59s ago");
    expect(screen([finished(false)], 60_000 + FINISHED_LINGER_MS + 1000).join("\n")).not.toContain("t_done");
    expect(screen([finished(true)], 60_000 + FINISHED_LINGER_MS + 1000).join("\n")).toContain("t_done");
  });

  it("shows how many of a finished task's checks passed, and a check running as its current tool", () => {
    const check = (passed: boolean) => ({
      command: "npm test",
      exit_code: passed ? 0 : 1,
      duration_ms: 10,
      passed,
      output_tail: "",
    });
    const report = (status: string, checks: unknown[]) => ({
      protocol: "caesar.report/v1",
      task_id: "t_done",
      status,
      summary: "Done",
      changes_verified_by: "git",
      report_source: "file",
      checks,
    });
    const finished = (status: string, checks: unknown[]) =>
      makeWatchedTask(
        {
          id: "t_done",
          phase: "finished",
          started_at: at(0),
          finished_at: at(60_000),
          outcome: "succeeded",
          report_status: status as "success",
          report: report(status, checks) as never,
        },
        [started],
      );
    expect(screen([finished("success", [check(true), check(true)])], 61_000)[2]).toMatch(
      /✓ success · checks 2\/2$/,
    );
    expect(screen([finished("partial", [check(true), check(false)])], 61_000)[2]).toMatch(
      /! partial · checks 1\/2$/,
    );
    const checking = makeWatchedTask({ id: "t_chk" }, [
      started,
      event(5_000, {
        type: "tool_use",
        tool: "check",
        id: "check-1-1",
        input_summary: "npm test",
        status: "started",
      }),
    ]);
    expect(screen([checking], 8_000)[4]).toBe("  ▸ check  npm test · 3.0s");
  });

  it("says so when a task's conductor is gone before finishing", () => {
    const task = makeWatchedTask({ id: "t_1", conductor: { pid: 999 } }, [started], { live: false });
    const lines = screen([task], 10_000);
    expect(lines[2]).toMatch(/! conductor gone$/);
    expect(lines[4]).toContain("its conductor (pid 999) exited before finishing");
  });

  it("names who holds the slots while a task waits for one", () => {
    const task = makeWatchedTask(
      { id: "t_1", phase: "queued", waiting_for_slot: [{ task_id: "t_a", pid: 1, since: at(0) }] },
      [],
    );
    expect(screen([task], 1000)[4]).toBe("  waiting for a slot, held by t_a");
  });

  it("fits the height: tasks that do not fit are counted, questions stay", () => {
    const tasks = Array.from({ length: 6 }, (_, i) =>
      makeWatchedTask({ id: `t_${i}`, started_at: at(i) }, [event(i, { type: "started", agent: "codex" })]),
    );
    const lines = screen(tasks, 5000, { height: 12 });
    expect(lines.length).toBeLessThanOrEqual(12);
    expect(lines[lines.length - 1]).toMatch(/^… 4 more tasks/);
  });

  it("says when nothing runs", () => {
    expect(screen([], 0)).toEqual([
      "caesar watch  0 running                                                                     12:00:00",
      "",
      "No task running. Tasks appear here when they start.",
    ]);
  });

  it("colours statuses, never the objective or what the agent said", () => {
    const task = makeWatchedTask({ id: "t_1", objective: "Fix it" }, [
      started,
      event(1000, { type: "message", text: "Reading" }),
    ]);
    const lines = renderWatchScreen([task], {
      theme: makeTheme({ color: 1, unicode: true }),
      width: 80,
      now: T0 + 2000,
    });
    expect(lines[2]).toContain("\x1b[36m● running\x1b[0m");
    expect(lines[3]).toBe("  Fix it");
    expect(lines[4]).toBe("  “Reading”");
  });
});

describe("caesar watch's screen on a narrow terminal", () => {
  it("never draws a line wider than the terminal, colours included", () => {
    for (const width of [24, 32, 40]) {
      for (const color of [0, 2] as const) {
        const lines = renderWatchScreen(scenarioTasks(), {
          theme: makeTheme({ color, unicode: true }),
          width,
          now: SCENARIO_NOW,
          interactive: true,
        });
        for (const line of lines) expect(displayWidth(line), line).toBeLessThanOrEqual(width);
      }
    }
  });

  it("puts the answer command on its own line when it does not fit beside its prompt", () => {
    const lines = renderWatchScreen(scenarioTasks(), { theme: plain, width: 50, now: SCENARIO_NOW });
    const at = lines.indexOf("  answer →");
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toBe('    caesar answer t_c1a0de55 q_3b9e "<text>"');
  });
});
