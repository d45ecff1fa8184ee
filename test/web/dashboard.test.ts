import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { git, makeRepo, writeConfig } from "../helpers/repo.js";
import { type ServeProcess, startServe } from "../helpers/serve-process.js";

/**
 * The dashboard, end to end: the real `caesar serve`, real tasks run by fixture agents, and Debian's
 * Chromium driven by Playwright (never a downloaded browser).
 */

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = fileURLToPath(new URL("../artifacts/", import.meta.url));
const WAIT = { timeout: 60_000 };
// Real tasks and a real browser on two shared cores: each test waits on conditions, never on a clock, but
// may take a while when the machine is busy.
const SLOW = 240_000;

let root: string;
let serve: ServeProcess;
let browser: BrowserContext;
const pageErrors: string[] = [];

beforeAll(async () => {
  root = makeRepo({
    "greet.js": 'export function greet(name) {\n  // Say hello.\n  return "Hello " + name;\n}\n',
  });
  writeConfig(root, "", ["asker", "hang", "hostile", "ticker"]);
  git(root, "add", ".");
  git(root, "commit", "-qm", "config");
  serve = await startServe(root);
  browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "caesar-chromium-")), {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1280, height: 900 },
  });
});

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
});

async function open(path: string): Promise<Page> {
  const page = await browser.newPage();
  page.on("pageerror", (error) => pageErrors.push(error.message));
  await page.goto(`${serve.url}${path}`);
  return page;
}

async function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const result = await runCaesar(["run", "--json", ...args], { cwd: root, env, timeoutMs: 90_000 });
  if (result.code === 2) throw new Error(result.stdout + result.stderr);
  return parseJsonOutput<{ task_id: string }>(result).task_id;
}

function eventLines(id: string): number {
  return readFileSync(join(root, ".caesar", "tasks", id, "events.jsonl"), "utf8")
    .trim()
    .split("\n").length;
}

/** Wait for the task page's status badge; when it never comes, say what the page showed instead. */
async function waitForStatus(page: Page, status: string): Promise<void> {
  try {
    await page.locator("[data-testid=status]", { hasText: status }).waitFor(WAIT);
  } catch (error) {
    const shown = async (testId: string) =>
      (await page
        .locator(`[data-testid=${testId}]`)
        .first()
        .textContent({ timeout: 1000 })
        .catch(() => null)) ?? "-";
    throw new Error(
      `no status "${status}": status ${await shown("status")}, notice ${await shown("notice")}, stream ${await shown("live")}`,
      { cause: error },
    );
  }
}

/** Wait until at least `count` events are shown (a locator: page scripts are limited by the CSP). */
async function waitForEvents(page: Page, count: number): Promise<void> {
  await page
    .locator("[data-testid=event]")
    .nth(count - 1)
    .waitFor(WAIT);
}

async function shownOrdinals(page: Page): Promise<number[]> {
  return page
    .locator("[data-testid=event]")
    .evaluateAll((items) => items.map((item) => Number(item.getAttribute("data-ordinal"))));
}

describe("a finished task's page", () => {
  it(
    "shows the report, the verified diff with syntax colouring and the events; Apply stages the change",
    async () => {
      const id = await run(["--agent", "reference", 'replace "Hello " with "Hello, " in greet.js']);
      const page = await open(`#/tasks/${id}`);
      await waitForStatus(page, "success");
      await expect(page.locator("[data-testid=summary]").textContent()).resolves.toContain("greet.js");
      const file = page.locator('[data-testid=diff] .diff-file[data-path="greet.js"]');
      await file.waitFor(WAIT);
      await expect(file.locator("tr.add").first().textContent()).resolves.toContain('"Hello, "');
      await expect(file.locator("tr.del").first().textContent()).resolves.toContain('"Hello "');
      // Coloured by highlight.js (JavaScript, from the file name): keywords, strings, the comment.
      expect(await file.locator(".hljs-keyword").allTextContents()).toEqual(
        expect.arrayContaining(["export", "function", "return"]),
      );
      await expect(file.locator(".hljs-string").count()).resolves.toBeGreaterThan(0);
      await expect(file.locator(".hljs-comment").first().textContent()).resolves.toBe("// Say hello.");
      await expect(page.locator("[data-testid=findings] h3").textContent()).resolves.toBe("Findings (0)");
      await waitForEvents(page, eventLines(id));
      expect(await shownOrdinals(page)).toEqual(Array.from({ length: eventLines(id) }, (_, i) => i + 1));
      await expect(page.locator("[data-testid=cancel]").isDisabled()).resolves.toBe(true);

      await page.locator("[data-testid=apply]").click();
      await page.locator('[data-testid=notice][data-kind="ok"]').waitFor(WAIT);
      await page.locator("[data-testid=applied]").waitFor(WAIT);
      expect(git(root, "diff", "--cached", "--name-only")).toBe("greet.js");
      expect(git(root, "diff", "--cached")).toContain('+  return "Hello, " + name;');
      await page.locator("[data-testid=apply]:disabled").waitFor(WAIT);

      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, "task-page.png"), fullPage: true });
      git(root, "reset", "-q", "--hard");
      await page.close();
    },
    SLOW,
  );
});

describe("the task list", () => {
  it(
    "is live, and delegates a task through the mutation API",
    async () => {
      const page = await open("");
      await page.locator("[data-testid=live]", { hasText: "live" }).waitFor(WAIT);
      await page
        .locator("[data-testid=delegate-objective]")
        .fill('create from-page.txt containing "made in the browser"');
      await page.locator("[data-testid=delegate-submit]").click();
      await page.locator("[data-testid=delegate-result]", { hasText: "Started t_" }).waitFor(WAIT);
      const text = (await page.locator("[data-testid=delegate-result]").textContent()) ?? "";
      const id = /Started (t_[0-9a-f]{8})/.exec(text)![1]!;
      // The row appears and turns to success without a reload: the list follows /api/stream.
      await page.locator(`[data-testid=task-row][data-task-id="${id}"][data-status="success"]`).waitFor(WAIT);
      const plan = JSON.parse(readFileSync(join(root, ".caesar", "tasks", id, "plan.json"), "utf8"));
      expect(plan.requested_by).toBe("http");
      await page.locator(`[data-testid=task-row][data-task-id="${id}"] a`).click();
      await page.locator("[data-testid=summary]", { hasText: "from-page.txt" }).waitFor(WAIT);
      await page.close();
    },
    SLOW,
  );
});

describe("talking to a running task", () => {
  it(
    "answers an agent's question from the page; the agent gets the answer",
    async () => {
      const result = await runCaesar(
        ["run", "--json", "--detach", "--agent", "asker", "ask about the colour"],
        { cwd: root },
      );
      const id = parseJsonOutput<{ task_id: string }>(result).task_id;
      const page = await open(`#/tasks/${id}`);
      const question = page.locator("[data-testid=question]");
      await question.waitFor(WAIT);
      await expect(question.locator(".text").textContent()).resolves.toBe(
        "Which colour should the button be?",
      );
      await question.locator("[data-testid=answer-input]").fill("blue, like the sky");
      await question.locator("[data-testid=answer-submit]").click();
      await waitForStatus(page, "success");
      await page
        .locator("[data-testid=summary]", { hasText: "The answer was: blue, like the sky" })
        .waitFor(WAIT);
      await page.locator("[data-testid=answered]", { hasText: "blue, like the sky" }).waitFor(WAIT);
      await expect(page.locator("[data-testid=question]").count()).resolves.toBe(0);
      const answer = JSON.parse(
        readFileSync(join(root, ".caesar", "tasks", id, "answers", "q_fixture01.json"), "utf8"),
      );
      expect(answer).toMatchObject({ answer: "blue, like the sky", answered_by: "http" });
      await page.close();
    },
    SLOW,
  );

  it(
    "cancels a running task from the page",
    async () => {
      const result = await runCaesar(["run", "--json", "--detach", "--agent", "hang", "wait forever"], {
        cwd: root,
      });
      const id = parseJsonOutput<{ task_id: string }>(result).task_id;
      const page = await open(`#/tasks/${id}`);
      await waitForStatus(page, "running");
      await page.locator("[data-testid=cancel]").click();
      await waitForStatus(page, "cancelled");
      const state = JSON.parse(readFileSync(join(root, ".caesar", "tasks", id, "state.json"), "utf8"));
      expect(state).toMatchObject({ outcome: "cancelled", cancel_requested: { by: "http" } });
      await page.close();
    },
    SLOW,
  );
});

describe("untrusted agent text", () => {
  it(
    "is shown as text everywhere: events, report, findings, next steps, diff",
    async () => {
      const id = await run(["--agent", "hostile", "be hostile"]);
      const payload = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
      const page = await open(`#/tasks/${id}`);
      await waitForStatus(page, "success");
      await expect(page.locator("[data-testid=summary]").textContent()).resolves.toBe(payload);
      await expect(page.locator("[data-testid=finding] strong").textContent()).resolves.toBe(payload);
      await page.locator("[data-testid=event]", { hasText: `hello ${payload}` }).waitFor(WAIT);
      await page.locator('[data-testid=diff] .diff-file[data-path="hostile.js"]').waitFor(WAIT);
      await expect(page.locator("[data-testid=diff]").textContent()).resolves.toContain(payload);
      await expect(page.locator("#view img, #view script").count()).resolves.toBe(0);
      await expect(
        page.evaluate(() => (globalThis as { __pwned?: number }).__pwned),
      ).resolves.toBeUndefined();
      await page.close();
    },
    SLOW,
  );
});

describe("the live event stream", () => {
  it(
    "survives a server restart mid-task: after the reconnect every event is shown exactly once",
    async () => {
      const result = await runCaesar(["run", "--json", "--detach", "--agent", "ticker", "tick"], {
        cwd: root,
        env: { TICKS: "60", TICK_MS: "100" },
      });
      const id = parseJsonOutput<{ task_id: string }>(result).task_id;
      const page = await open(`#/tasks/${id}`);
      await waitForEvents(page, 5);

      const port = serve.port;
      await serve.stop();
      await page.locator("[data-testid=live]", { hasText: "reconnecting" }).waitFor(WAIT);
      // Wait until the agent wrote more events while no server was up, then start again on the same port.
      const seenWhileDown = eventLines(id);
      await expect
        .poll(() => eventLines(id), { timeout: 60_000, interval: 100 })
        .toBeGreaterThan(seenWhileDown + 3);
      serve = await startServe(root, ["--port", String(port)]);

      await waitForStatus(page, "success");
      await waitForEvents(page, eventLines(id));
      const total = eventLines(id);
      expect(await shownOrdinals(page)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      await expect(page.locator("[data-testid=event][data-gap]").count()).resolves.toBe(0);
      await expect(page.locator("[data-testid=event]", { hasText: "tick 60 of 60" }).count()).resolves.toBe(
        1,
      );
      await page.close();
    },
    SLOW,
  );

  it("no page raised an error", () => {
    expect(pageErrors).toEqual([]);
  });
});
