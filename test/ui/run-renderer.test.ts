import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { TaskStateSchema } from "../../src/engine/store/state.js";
import { EVENT_LABELS, LABEL_WIDTH } from "../../src/ui/event-line.js";
import { createRunRenderer, type RunRendererOptions } from "../../src/ui/run-renderer.js";
import { displayWidth, stripAnsi } from "../../src/ui/text.js";
import { makeTheme } from "../../src/ui/theme.js";
import { readFixtureState, readStream } from "./fixture-project.js";

/** A stream that keeps what is written, posing as a terminal when asked to. */
class Capture extends Writable {
  text = "";
  constructor(
    readonly isTTY = false,
    readonly columns?: number,
  ) {
    super();
  }
  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    this.text += chunk.toString();
    callback();
  }
}

const STREAMS = ["codex", "claude", "opencode", "gemini", "copilot", "script-agent"];
const WITH_STATE = new Set(["codex", "claude", "script-agent"]);

function renderStream(name: string, options: Partial<RunRendererOptions> = {}, out = new Capture()): string {
  const events = readStream(name);
  const renderer = createRunRenderer({ out, taskId: events[0]!.task_id, ...options });
  for (const event of events) renderer.event(event);
  if (WITH_STATE.has(name)) renderer.finished(TaskStateSchema.parse(readFixtureState(name)));
  return out.text;
}

const LOCALES = { utf8: true, c: false } as const;

describe("caesar run's live lines: expected screens", () => {
  for (const name of STREAMS) {
    for (const width of [60, 100]) {
      for (const [locale, unicode] of Object.entries(LOCALES)) {
        it(`${name} at ${width} columns, ${locale} locale`, async () => {
          const text = renderStream(name, { theme: makeTheme({ color: 0, unicode }), width });
          await expect(text).toMatchFileSnapshot(`../fixtures/ui/screens/run/${name}.${width}.${locale}.txt`);
          for (const line of text.split("\n")) expect(displayWidth(line), line).toBeLessThanOrEqual(width);
          if (!unicode) expect(text).toMatch(/^[\x20-\x7e\n]*$/);
        });
      }
    }
  }
});

describe("caesar run's live lines", () => {
  const plain = makeTheme({ color: 0, unicode: true });
  const render = (name: string) => renderStream(name, { theme: plain, width: 100 }).split("\n");

  it("keep the label column: every line starts with a label or is a continuation under the text", () => {
    const labels = new Set([
      ...Object.values(EVENT_LABELS),
      "wait",
      "status",
      "summary",
      "changes",
      "findings",
      "todo",
      "next",
      "error",
      "question",
    ]);
    for (const name of STREAMS) {
      for (const line of render(name)) {
        if (line === "") continue;
        const label = line.slice(0, LABEL_WIDTH).trim();
        expect(label === "" || labels.has(label), `${name}: ${line}`).toBe(true);
      }
    }
  });

  it("show a tool when it starts and again when it ends, with its duration, paired by id", () => {
    const lines = render("codex");
    const started = lines.findIndex(
      (line) => line.includes("▸ bash") && line.includes("npm test -- test/auth/login.test.ts"),
    );
    const ended = lines.findIndex(
      (line) => line.includes("✗ bash") && line.includes("npm test -- test/auth/login.test.ts"),
    );
    expect(started).toBeGreaterThan(-1);
    expect(ended).toBeGreaterThan(started);
    expect(lines[ended]).toMatch(/exit 1 · 6\.2s$/);
    expect(lines[ended + 1]).toContain("FAIL test/auth/login.test.ts");
  });

  it("name a claude or gemini tool at its end though the end event carries only the call id", () => {
    expect(render("claude")).toContain("tool     ✗ Bash  npx tsc --noEmit  8.7s");
    expect(render("gemini")).toContain("tool     ✓ run_shell_command  echo OK > hello.txt  127ms");
  });

  it("show opencode's completed-only tools once, with the duration the agent measured", () => {
    const tools = render("opencode").filter((line) => line.startsWith("tool"));
    expect(tools).toEqual(["tool     ✓ bash  echo OK > hello.txt  177ms"]);
  });

  it("show a message that is a serialized report by its status and summary, fenced or bare", () => {
    expect(render("claude")).toContain(
      "agent    report ! partial · Cache wired into the API client with invalidation on write; the type er…",
    );
    expect(render("script-agent")).toContain(
      "agent    report ✗ failed · eslint crashed on src/legacy/util.js; nothing was fixed.",
    );
  });

  it("make a pending question unmissable and say how to answer it", () => {
    const lines = render("claude");
    const index = lines.findIndex((line) => line.startsWith("question ? Should cache entries expire"));
    expect(index).toBeGreaterThan(-1);
    expect(lines.slice(index, index + 4).join("\n")).toContain('caesar answer t_c1a0de55 q_3b9e "<text>"');
  });

  it("end with the report's status and source, the summary, files changed according to git, findings by severity, the next command", () => {
    const text = render("codex").join("\n");
    expect(text).toContain("status   ✓ success · report: the agent's structured output");
    expect(text).toContain("changes  2 files changed, according to git");
    expect(text).toContain("findings 1 high · 1 medium · 1 low");
    expect(text.indexOf("high     Session id")).toBeLessThan(text.indexOf("medium   logout()"));
    expect(text).toContain("next     caesar diff t_7f3a9c21   caesar apply t_7f3a9c21");
    // inplace: the changes are already in the working tree; nothing to apply
    expect(render("claude").join("\n")).toContain("next     caesar diff t_c1a0de55\n");
  });

  it("say whether every check passed, each check with how it ended, and the attempts it took", () => {
    const state = TaskStateSchema.parse(readFixtureState("codex"));
    const check = (command: string, passed: boolean, extra = {}) => ({
      command,
      exit_code: passed ? 0 : 1,
      duration_ms: 1200,
      passed,
      output_tail: "",
      ...extra,
    });
    const attempt = (n: number, how: string, passed: boolean) => ({
      attempt: n,
      how,
      session: "s",
      started_at: state.started_at!,
      finished_at: state.finished_at!,
      outcome: "succeeded",
      exit_code: 0,
      checks: [],
      checks_passed: passed,
    });
    const summary = (checks: unknown[], attempts: unknown[]) => {
      const out = new Capture();
      const renderer = createRunRenderer({ out, taskId: state.id, theme: plain, width: 100 });
      renderer.finished(TaskStateSchema.parse({ ...state, report: { ...state.report, checks, attempts } }));
      return out.text;
    };
    const passed = summary(
      [check("npm test", true), check("npm run lint", true)],
      [attempt(1, "first", false), attempt(2, "resumed", true)],
    );
    expect(passed).toContain("checks   ✓ 2/2 checks passed after 2 attempts");
    expect(passed).toMatch(/ {9}✓ npm test +1\.2s/);
    expect(passed).toContain("attempts 1 ✗ first · 2 ✓ resumed");
    const failed = summary(
      [check("npm test", false, { error: "killed at its deadline (30s)", exit_code: null })],
      [],
    );
    expect(failed).toContain("checks   ✗ 0/1 checks passed");
    expect(failed).toMatch(/✗ npm test +killed at its deadline \(30s\)/);
    expect(failed).not.toContain("attempts ");
  });

  it("say who holds the slots while waiting, once per change of holders", () => {
    const out = new Capture();
    const renderer = createRunRenderer({
      out,
      taskId: "t_new",
      theme: plain,
      width: 100,
      now: () => Date.parse("2026-11-30T13:00:00Z"),
    });
    const holders = [
      { task_id: "t_7f3a9c21", pid: 48200, since: "2026-11-30T12:57:00Z" },
      { task_id: "t_c1a0de55", pid: 50100, since: "2026-11-30T12:59:20Z" },
    ];
    renderer.waiting(holders);
    renderer.waiting(holders);
    expect(out.text).toBe(
      "wait     ○ waiting for a slot, held by t_7f3a9c21 (pid 48200, 3m00s), t_c1a0de55 (pid 50100, 40s)\n",
    );
  });
});

describe("caesar run's colours", () => {
  const tty = (env: Record<string, string>) => renderStream("codex", { env }, new Capture(true, 100));

  it("follow the terminal: 256 colours and UTF-8 from TERM and LANG", () => {
    const text = tty({ TERM: "xterm-256color", LANG: "en_US.UTF-8" });
    expect(text).toContain("\x1b[38;5;35m✓ success\x1b[0m");
    expect(text).toContain("\x1b[38;5;31m▸ \x1b[0m");
  });

  it("never colour primary text: what the agent says, paths, the objective", () => {
    const lines = tty({ TERM: "xterm-256color", LANG: "en_US.UTF-8" }).split("\n");
    const message = lines.find((line) => stripAnsi(line).startsWith("agent    The test reads"))!;
    expect(message.slice(message.indexOf("The test reads"))).not.toContain("\x1b");
    const file = lines.find(
      (line) => stripAnsi(line).includes("src/auth/login.ts") && stripAnsi(line).startsWith("file"),
    )!;
    expect(file).toMatch(/\x1b\[0msrc\/auth\/login\.ts$/);
  });

  it("are cut by NO_COLOR and by TERM=dumb, and absent outside a terminal", () => {
    expect(tty({ TERM: "xterm-256color", NO_COLOR: "1", LANG: "C.UTF-8" })).not.toContain("\x1b");
    expect(tty({ TERM: "dumb", LANG: "C.UTF-8" })).not.toContain("\x1b");
    expect(renderStream("codex", { env: { TERM: "xterm-256color" } })).not.toContain("\x1b");
  });

  it("fall back to ASCII marks in the C locale, with the same layout", () => {
    const ascii = tty({ TERM: "dumb", LANG: "C" });
    const unicode = tty({ TERM: "dumb", LANG: "C.UTF-8" });
    expect(ascii).toMatch(/^[\x20-\x7e\n]*$/);
    const asciiLines = ascii.split("\n");
    const unicodeLines = unicode.split("\n");
    expect(asciiLines.length).toBe(unicodeLines.length);
    // Marks take the same columns; only a cut line may differ, by where its ellipsis ("…" or "...") falls.
    unicodeLines.forEach((line, index) => {
      if (!line.includes("…")) expect(displayWidth(asciiLines[index]!), line).toBe(displayWidth(line));
    });
  });

  it("keep the agent's own escape sequences off the screen", () => {
    const text = renderStream("script-agent", { theme: makeTheme({ color: 0, unicode: true }) });
    expect(text).toContain("eslint exited with 2: no-undef rule crashed");
    expect(text).not.toContain("\x1b");
  });
});
