import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CAESAR_BIN, parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { FIXTURE_BIN, git, makeRepo, writeConfig, writeFiles } from "../helpers/repo.js";
import { type ServeProcess, startServe } from "../helpers/serve-process.js";
import { CHROMIUM, locate, standInForMissing } from "../helpers/system-deps.js";

/**
 * The dashboard, end to end: the real `caesar serve`, real tasks run by fixture agents, and Debian's
 * Chromium driven by Playwright (never a downloaded browser). Each test stands on its own: its own
 * workspace, its own server, its own browser context, logged in through the one-time URL the server
 * printed — every mutation below goes through that session's cookie. The Chromium is found wherever it is
 * installed, or the suite stands in for itself with one line saying what to install (system-deps.ts).
 */

const CHROMIUM_BIN = locate(CHROMIUM);
const describeWithChromium = describe.runIf(CHROMIUM_BIN !== undefined);
const ARTIFACTS = fileURLToPath(new URL("../artifacts/", import.meta.url));
const WAIT = { timeout: 60_000 };
// Real tasks and a real browser on two shared cores: each test waits on conditions, never on a clock, but
// may take a while when the machine is busy.
const SLOW = 240_000;
/** A name the browser resolves to 127.0.0.1, as an attacker's DNS would during a rebinding attack. */
const REBOUND = "rebound.example";

let browser: Browser;

beforeAll(async () => {
  if (CHROMIUM_BIN === undefined) return;
  browser = await chromium.launch({
    executablePath: CHROMIUM_BIN,
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
      `--host-resolver-rules=MAP ${REBOUND} 127.0.0.1`,
    ],
  });
});

afterAll(async () => {
  await browser?.close();
});

interface Dashboard {
  root: string;
  serve: ServeProcess;
  context: BrowserContext;
  /** The page that logged in, now showing the task list. */
  page: Page;
  /** Errors any page of this dashboard raised (checked after each test). */
  pageErrors: string[];
  open(path: string): Promise<Page>;
}

const opened: Dashboard[] = [];

afterEach(async () => {
  const dashboards = opened.splice(0);
  for (const dashboard of dashboards) {
    await dashboard.context.close();
    await dashboard.serve.stop();
  }
  for (const dashboard of dashboards) expect(dashboard.pageErrors).toEqual([]);
});

/** A workspace with the fixture agents, its server, and a browser context logged in with the printed URL. */
async function openDashboard({ login = true }: { login?: boolean } = {}): Promise<Dashboard> {
  const root = makeRepo({
    "greet.js": 'export function greet(name) {\n  // Say hello.\n  return "Hello " + name;\n}\n',
  });
  writeConfig(root, "", ["asker", "hang", "hostile", "ticker"]);
  git(root, "add", ".");
  git(root, "commit", "-qm", "config");
  const serve = await startServe(root);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const pageErrors: string[] = [];
  const open = async (path: string) => {
    const page = await context.newPage();
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(`${serve.url}${path}`);
    return page;
  };
  const dashboard: Dashboard = { root, serve, context, pageErrors, open, page: undefined as unknown as Page };
  opened.push(dashboard);
  if (login) {
    const page = await context.newPage();
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(serve.loginUrl);
    await page.locator('[data-testid=auth][data-state="in"]').waitFor(WAIT);
    dashboard.page = page;
  } else {
    dashboard.page = await open("");
  }
  return dashboard;
}

async function run(dashboard: Dashboard, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const result = await runCaesar(["run", "--json", ...args], { cwd: dashboard.root, env, timeoutMs: 90_000 });
  if (result.code === 2) throw new Error(result.stdout + result.stderr);
  return parseJsonOutput<{ task_id: string }>(result).task_id;
}

function taskFile(dashboard: Dashboard, id: string, ...path: string[]): string {
  return join(dashboard.root, ".caesar", "tasks", id, ...path);
}

function eventLines(dashboard: Dashboard, id: string): number {
  return readFileSync(taskFile(dashboard, id, "events.jsonl"), "utf8")
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

describeWithChromium("logging in", () => {
  it(
    "the printed one-time URL gives this browser an HttpOnly, SameSite=Strict session; used again, it gives nothing",
    async () => {
      const dashboard = await openDashboard();
      const { page, context, serve } = dashboard;
      // The login's fragment (the CSRF secret) is gone from the address bar: the page kept it.
      expect(new URL(page.url()).hash).toBe("#/");
      const cookies = await context.cookies(serve.url);
      expect(cookies).toEqual([
        expect.objectContaining({
          name: `caesar_session_${serve.port}`,
          httpOnly: true,
          sameSite: "Strict",
          path: "/",
          expires: -1,
        }),
      ]);
      // The page's scripts cannot read the cookie.
      await expect(
        page.evaluate(() => (globalThis as unknown as { document: { cookie: string } }).document.cookie),
      ).resolves.toBe("");

      const elsewhere = await browser.newContext();
      try {
        const again = await elsewhere.newPage();
        const response = await again.goto(serve.loginUrl);
        expect(response?.status()).toBe(403);
        await expect(again.locator("body").textContent()).resolves.toContain("login_code_invalid");
        expect(await elsewhere.cookies(serve.url)).toEqual([]);
      } finally {
        await elsewhere.close();
      }
    },
    SLOW,
  );

  it(
    "without logging in, the dashboard reads but every action is refused, saying how to log in",
    async () => {
      const dashboard = await openDashboard({ login: false });
      const { page } = dashboard;
      await page
        .locator('[data-testid=auth][data-state="out"]', { hasText: "caesar serve login" })
        .waitFor(WAIT);
      await page.locator("[data-testid=live]", { hasText: "live" }).waitFor(WAIT);
      await page.locator("[data-testid=delegate-objective]").fill('create nope.txt containing "no"');
      await page.locator("[data-testid=delegate-submit]").click();
      await page.locator("[data-testid=delegate-result]", { hasText: "caesar serve login" }).waitFor(WAIT);
      const tasks = join(dashboard.root, ".caesar", "tasks");
      expect(existsSync(tasks) ? readdirSync(tasks) : []).toEqual([]);
    },
    SLOW,
  );
});

describeWithChromium("a finished task's page", () => {
  it(
    "shows the report, the verified diff with syntax colouring and the events; Apply stages the change",
    async () => {
      const dashboard = await openDashboard();
      const id = await run(dashboard, [
        "--agent",
        "reference",
        'replace "Hello " with "Hello, " in greet.js',
      ]);
      const page = await dashboard.open(`#/tasks/${id}`);
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
      await waitForEvents(page, eventLines(dashboard, id));
      expect(await shownOrdinals(page)).toEqual(
        Array.from({ length: eventLines(dashboard, id) }, (_, i) => i + 1),
      );
      await expect(page.locator("[data-testid=cancel]").isDisabled()).resolves.toBe(true);

      await page.locator("[data-testid=apply]").click();
      await page.locator('[data-testid=notice][data-kind="ok"]').waitFor(WAIT);
      await page.locator("[data-testid=applied]").waitFor(WAIT);
      expect(git(dashboard.root, "diff", "--cached", "--name-only")).toBe("greet.js");
      expect(git(dashboard.root, "diff", "--cached")).toContain('+  return "Hello, " + name;');
      await page.locator("[data-testid=apply]:disabled").waitFor(WAIT);
      const state = JSON.parse(readFileSync(taskFile(dashboard, id, "state.json"), "utf8"));
      expect(state.applied).toMatchObject({ by: "http", files: ["greet.js"] });

      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, "task-page.png"), fullPage: true });
    },
    SLOW,
  );
});

describeWithChromium("the task list", () => {
  it(
    "is live, and delegates a task through the mutation API",
    async () => {
      const dashboard = await openDashboard();
      const { page } = dashboard;
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
      const plan = JSON.parse(readFileSync(taskFile(dashboard, id, "plan.json"), "utf8"));
      expect(plan.requested_by).toBe("http");
      await page.locator(`[data-testid=task-row][data-task-id="${id}"] a`).click();
      await page.locator("[data-testid=summary]", { hasText: "from-page.txt" }).waitFor(WAIT);
    },
    SLOW,
  );
});

describeWithChromium("the delegation tree", () => {
  it(
    "the list shows each task under the one that delegated it, live; a task page shows its parent, its children and its tree",
    async () => {
      const dashboard = await openDashboard();
      const { page } = dashboard;
      const delegator = join(FIXTURE_BIN, "delegator.mjs");
      writeFiles(dashboard.root, {
        ".caesar/config.local.toml": `[risk_profiles.default]\ndelegation_policy = { mode = "allow" }\n${[
          "planner",
          "worker",
          "helper",
        ]
          .map((id) => `[[agent]]\nid = "${id}"\nbin = "${delegator}"\n`)
          .join("\n")}`,
      });
      await page.locator("[data-testid=live]", { hasText: "live" }).waitFor(WAIT);
      const planner = {
        name: "planner",
        usage: { input_tokens: 1500, output_tokens: 500, cost_usd: 0.25 },
        calls: [
          {
            agent: "worker",
            flags: ["--mode", "read-only"],
            objective: {
              name: "worker",
              calls: [{ agent: "helper", objective: { name: "deep", calls: [] } }],
            },
          },
          { agent: "helper", flags: ["--mode", "read-only"], objective: { name: "beside", calls: [] } },
        ],
      };
      const top = await run(dashboard, ["--agent", "planner", JSON.stringify(planner)], { CAESAR_BIN });
      // caesar's record (its task directory's mirror is written just after it).
      const state = (id: string) =>
        JSON.parse(readFileSync(join(dashboard.root, ".git", "caesar", "tasks", id, "state.json"), "utf8"));
      const callsOf = (id: string) =>
        (JSON.parse(state(id).report.details) as { task_id: string }[]).map((c) => c.task_id);
      const [worker, beside] = callsOf(top) as [string, string];
      const [deep] = callsOf(worker) as [string];

      // The list (open before the tasks existed) shows the tree: each child right under its parent.
      await page
        .locator(`[data-testid=task-row][data-task-id="${beside}"][data-status="success"]`)
        .waitFor(WAIT);
      await page
        .locator(`[data-testid=task-row][data-task-id="${top}"][data-status="success"]`)
        .waitFor(WAIT);
      const rows = page.locator("[data-testid=task-row]");
      const order = await rows.evaluateAll((all) =>
        all.map((row) => [row.getAttribute("data-task-id"), row.getAttribute("data-level")]),
      );
      expect(order).toEqual([
        [top, "0"],
        [worker, "1"],
        [deep, "2"],
        [beside, "1"],
      ]);
      expect(
        await page
          .locator(`[data-testid=task-row][data-task-id="${top}"] [data-testid=task-spent]`)
          .textContent(),
      ).toBe("$0.2500 · 2.0k tok");

      // A child's page: its parent, its own child, and the whole tree with itself marked.
      await page.locator(`[data-testid=task-row][data-task-id="${worker}"] a`).first().click();
      const delegation = page.locator("[data-testid=delegation]");
      await delegation.locator("[data-testid=parent]", { hasText: `Delegated by ${top}` }).waitFor(WAIT);
      expect(await delegation.locator("[data-testid=children]").textContent()).toBe(`1 sub-task: ${deep}`);
      const nodes = delegation.locator("[data-testid=tree-node]");
      await expect.poll(() => nodes.count(), WAIT).toBe(4);
      expect(await nodes.evaluateAll((all) => all.map((node) => node.getAttribute("data-task-id")))).toEqual([
        top,
        worker,
        deep,
        beside,
      ]);
      expect(await delegation.locator(".tree-node.current").textContent()).toContain(worker);
      expect(await nodes.first().locator("[data-testid=tree-spent]").first().textContent()).toContain(
        "$0.2500",
      );
      // Following the tree to the parent: the root, two sub-tasks.
      await delegation.locator(`a[href$="${top}"]`).first().click();
      await page
        .locator("[data-testid=delegation] [data-testid=parent]", { hasText: "root of its tree" })
        .waitFor(WAIT);
      expect(await page.locator("[data-testid=delegation] [data-testid=children]").textContent()).toBe(
        `2 sub-tasks: ${worker}, ${beside}`,
      );
    },
    SLOW,
  );
});

describeWithChromium("checks", () => {
  it(
    "show in the list (a column) and on the task page (each check, the end of a failing one)",
    async () => {
      const dashboard = await openDashboard();
      const id = await run(dashboard, [
        "--agent",
        "reference",
        "--check",
        "test -f checked.txt",
        "--check",
        "echo the-test-output; exit 4",
        'create checked.txt containing "c"',
      ]);
      const { page } = dashboard;
      await page
        .locator(`[data-testid=task-row][data-task-id="${id}"] [data-testid=task-checks]`, {
          hasText: "✗ 1/2",
        })
        .waitFor(WAIT);
      await page.locator(`[data-testid=task-row][data-task-id="${id}"] a`).click();
      await page.locator("[data-testid=checks-verdict]", { hasText: "1/2 passed" }).waitFor(WAIT);
      const checks = page.locator("[data-testid=check]");
      expect(await checks.count()).toBe(2);
      expect(await checks.nth(0).textContent()).toContain("test -f checked.txt");
      expect(await checks.nth(1).locator("pre").textContent()).toContain("the-test-output");
      await waitForStatus(page, "partial");
    },
    SLOW,
  );
});

describeWithChromium("talking to a running task", () => {
  it(
    "answers an agent's question from the page; the agent gets the answer",
    async () => {
      const dashboard = await openDashboard();
      const id = await run(dashboard, ["--detach", "--agent", "asker", "ask about the colour"]);
      const page = await dashboard.open(`#/tasks/${id}`);
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
      const answer = JSON.parse(readFileSync(taskFile(dashboard, id, "answers", "q_fixture01.json"), "utf8"));
      expect(answer).toMatchObject({ answer: "blue, like the sky", answered_by: "http" });
    },
    SLOW,
  );

  it(
    "cancels a running task from the page",
    async () => {
      const dashboard = await openDashboard();
      const id = await run(dashboard, ["--detach", "--agent", "hang", "wait forever"]);
      const page = await dashboard.open(`#/tasks/${id}`);
      await waitForStatus(page, "running");
      await page.locator("[data-testid=cancel]").click();
      await waitForStatus(page, "cancelled");
      const state = JSON.parse(readFileSync(taskFile(dashboard, id, "state.json"), "utf8"));
      expect(state).toMatchObject({ outcome: "cancelled", cancel_requested: { by: "http" } });
    },
    SLOW,
  );
});

describeWithChromium("attacks on a logged-in browser", () => {
  let attacker: Server;
  // The browser keeps its connections to the attacker's page alive: closed at once, or close() waits on them.
  afterEach(
    () =>
      new Promise<void>((resolve) => {
        if (!attacker) return resolve();
        attacker.close(() => resolve());
        attacker.closeAllConnections();
      }),
  );

  it(
    "a page of another origin on this host (same site: the browser sends the cookie) cannot mutate",
    async () => {
      const dashboard = await openDashboard();
      const id = await run(dashboard, ["--detach", "--agent", "hang", "wait forever"]);
      const target = `${dashboard.serve.url}api/mutate/v1/request`;
      const envelope = JSON.stringify({
        protocol: "cz-mutate/1",
        requestId: "0b1e2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d",
        runId: dashboard.serve.runId,
        revision: 1_000_000,
        operation: "task.cancel",
        arguments: { task_id: id },
      });
      // Another local server — another user's, say — on another port of 127.0.0.1: cookies are per host, so
      // the browser sends caesar's session with what this page sends. Its attempts post a result back.
      const results: string[] = [];
      const page = `<!doctype html><script>
        const tries = [
          ["json", { method: "POST", credentials: "include", headers: { "Content-Type": "application/json", "X-Commit-Zero": "local-demo" }, body: ${JSON.stringify(envelope)} }],
          ["text/plain", { method: "POST", credentials: "include", mode: "no-cors", headers: { "Content-Type": "text/plain" }, body: ${JSON.stringify(envelope)} }],
        ];
        (async () => {
          for (const [name, init] of tries) {
            let outcome;
            try { const r = await fetch(${JSON.stringify(target)}, init); outcome = r.type === "opaque" ? "opaque" : String(r.status); }
            catch (e) { outcome = "blocked: " + e.message; }
            await fetch("/result", { method: "POST", body: name + " " + outcome });
          }
          await fetch("/result", { method: "POST", body: "done" });
          document.getElementById("form").submit();
        })();
      </script>
      <form id="form" method="POST" enctype="text/plain" action=${JSON.stringify(target)}>
        <input type="hidden" name=${JSON.stringify(`${envelope.slice(0, -1)}, "x": "`)} value='"}'>
      </form>`;
      attacker = createServer((request, response) => {
        if (request.method === "POST") {
          let body = "";
          request.on("data", (chunk) => {
            body += chunk;
          });
          request.on("end", () => {
            results.push(body);
            response.end();
          });
          return;
        }
        response.writeHead(200, { "Content-Type": "text/html" }).end(page);
      });
      await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
      const attackerPage = await dashboard.context.newPage();
      await attackerPage.goto(`http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`);
      await expect.poll(() => results.includes("done"), WAIT).toBe(true);
      // The JSON request needs a preflight the server never grants; the page cannot read the no-cors one.
      expect(results.find((line) => line.startsWith("json"))).toMatch(/^json blocked/);
      // A form posted at the top level shows what the server answered: the browser sent the session cookie
      // (same site), and the request was refused as cross-origin before anything read its body.
      await attackerPage.waitForURL(target, WAIT);
      const shown = (await attackerPage.locator("body").textContent()) ?? "";
      expect(shown, shown).toContain('"code":"cross_origin"');
      // Not cancelled: still under way (preparing or running, on a loaded machine), no cancel asked.
      const state = JSON.parse(readFileSync(taskFile(dashboard, id, "state.json"), "utf8"));
      expect(state.phase).not.toBe("finished");
      expect(state.cancel_requested ?? null).toBeNull();
      await runCaesar(["cancel", id], { cwd: dashboard.root });
    },
    SLOW,
  );

  it(
    "a rebinding page (another name resolved to 127.0.0.1) gets nothing from the server, not even the page",
    async () => {
      const dashboard = await openDashboard();
      const page = await dashboard.context.newPage();
      const response = await page.goto(`http://${REBOUND}:${dashboard.serve.port}/`);
      expect(response?.status()).toBe(403);
      await expect(page.locator("body").textContent()).resolves.toContain("host_not_allowed");
      const api = await page.goto(`http://${REBOUND}:${dashboard.serve.port}/api/state`);
      expect(api?.status()).toBe(403);
    },
    SLOW,
  );
});

describeWithChromium("untrusted agent text", () => {
  it(
    "is shown as text everywhere: events, report, findings, next steps, diff",
    async () => {
      const dashboard = await openDashboard();
      const id = await run(dashboard, ["--agent", "hostile", "be hostile"]);
      const payload = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
      const page = await dashboard.open(`#/tasks/${id}`);
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
    },
    SLOW,
  );
});

describeWithChromium("the live event stream", () => {
  it(
    "survives a server restart mid-task: after the reconnect every event is shown exactly once",
    async () => {
      const dashboard = await openDashboard();
      const id = await run(dashboard, ["--detach", "--agent", "ticker", "tick"], {
        // ≈ 25 s of ticks: still ticking after the page opened and the server stopped, on a loaded machine.
        TICKS: "250",
        TICK_MS: "100",
      });
      const page = await dashboard.open(`#/tasks/${id}`);
      await waitForEvents(page, 5);

      const port = dashboard.serve.port;
      await dashboard.serve.stop();
      await page.locator("[data-testid=live]", { hasText: "reconnecting" }).waitFor(WAIT);
      // Wait until the agent wrote more events while no server was up, then start again on the same port.
      const seenWhileDown = eventLines(dashboard, id);
      await expect
        .poll(() => eventLines(dashboard, id), { timeout: 60_000, interval: 100 })
        .toBeGreaterThan(seenWhileDown + 3);
      dashboard.serve = await startServe(dashboard.root, ["--port", String(port)]);

      await waitForStatus(page, "success");
      await waitForEvents(page, eventLines(dashboard, id));
      const total = eventLines(dashboard, id);
      expect(await shownOrdinals(page)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      await expect(page.locator("[data-testid=event][data-gap]").count()).resolves.toBe(0);
      await expect(page.locator("[data-testid=event]", { hasText: "tick 250 of 250" }).count()).resolves.toBe(
        1,
      );
      // The session was this run's: the restarted server does not know it.
      await expect(
        page.evaluate(
          async () =>
            ((await (await fetch("/api/session")).json()) as { authenticated: boolean }).authenticated,
        ),
      ).resolves.toBe(false);
      expect(existsSync(taskFile(dashboard, id, "state.json"))).toBe(true);
    },
    SLOW,
  );
});

if (CHROMIUM_BIN === undefined) describe("the dashboard in a browser", () => standInForMissing(CHROMIUM));
