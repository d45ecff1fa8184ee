import { readFileSync, writeFileSync } from "node:fs";
import { Writable } from "node:stream";
import { beforeAll, describe, expect, it } from "vitest";
import { TaskStateSchema } from "../../src/engine/store/state.js";
import { createRunRenderer } from "../../src/ui/run-renderer.js";
import { makeTheme } from "../../src/ui/theme.js";
import { renderWatchScreen } from "../../src/ui/watch/screen.js";
import { readFixtureState, readStream } from "./fixture-project.js";
import { SCENARIO_NOW, scenarioTasks } from "./watch-fixtures.js";

/**
 * The README's screen captures are rendered from fixtures, never typed by hand: this test renders them
 * again and compares. `UPDATE_README=1 npx vitest run test/ui/readme-screens.test.ts` rewrites them.
 */
const README = new URL("../../README.md", import.meta.url);
const WIDTH = 80;
const theme = makeTheme({ color: 0, unicode: true });

beforeAll(() => {
  process.env.TZ = "UTC";
});

function runCapture(): string {
  let text = "";
  const out = new Writable({
    write(chunk, _encoding, callback) {
      text += chunk.toString();
      callback();
    },
  });
  const events = readStream("codex");
  const renderer = createRunRenderer({ out, taskId: "t_7f3a9c21", theme, width: WIDTH });
  for (const event of events) renderer.event(event);
  renderer.finished(TaskStateSchema.parse(readFixtureState("codex")));
  return `$ caesar run --agent codex "Fix the flaky login test in test/auth/login.test.ts"\n${text}`;
}

function watchCapture(): string {
  const lines = renderWatchScreen(scenarioTasks(), {
    theme,
    width: WIDTH,
    now: SCENARIO_NOW,
    interactive: true,
  });
  return `$ caesar watch\n${lines.join("\n")}\n`;
}

const CAPTURES: Record<string, () => string> = { run: runCapture, watch: watchCapture };

function blockAfter(readme: string, name: string): { start: number; end: number } {
  const marker = `<!-- screen: ${name} -->\n\`\`\`text\n`;
  const at = readme.indexOf(marker);
  if (at === -1) throw new Error(`README.md has no ${JSON.stringify(marker)}`);
  const start = at + marker.length;
  return { start, end: readme.indexOf("```\n", start) };
}

describe("README screen captures", () => {
  for (const [name, capture] of Object.entries(CAPTURES)) {
    it(`the ${name} capture is what the renderer draws`, () => {
      let readme = readFileSync(README, "utf8");
      const { start, end } = blockAfter(readme, name);
      const expected = capture();
      if (process.env.UPDATE_README) {
        readme = readme.slice(0, start) + expected + readme.slice(end);
        writeFileSync(README, readme);
      }
      // The whole block, to its closing fence: a stale line after what the renderer draws fails too.
      expect(readFileSync(README, "utf8").slice(start, end)).toBe(expected);
    });
  }
});
