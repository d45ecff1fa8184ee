import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { mockSetupFor, writeSetupFiles } from "../../src/mock-model/agent-env.js";
import { loadScenario } from "../../src/mock-model/scenario.js";
import { startMockModel } from "../../src/mock-model/server.js";
import { agentStateFor } from "../helpers/agent-state.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { AGENT_BIN_DIR } from "../helpers/live-agent.js";
import { makeRepo, tempDir } from "../helpers/repo.js";
import { itWith, pinnedAgentCli } from "../helpers/system-deps.js";

/**
 * The return channel, live: `caesar run --channel` with a real agent CLI whose model is `caesar mock-model`
 * playing the `channel` scenario. The CLI starts `caesar return-channel serve` itself (its adapter wires it for
 * this run only); the model asks the orchestrator a question through it; this test answers with
 * `caesar answer`; the model writes hello.txt, submits its report through the channel, and says what the
 * orchestrator answered. The report's source is `channel`.
 */
const CLIS = ["claude", "codex", "copilot", "gemini", "opencode"];
const LIVE_TIMEOUT_MS = 240_000;

interface StatusJson {
  state: {
    phase: string;
    outcome: string | null;
    report: {
      status: string;
      report_source: string;
      changes_verified_by: string;
      changes: { path: string }[];
    } | null;
  };
  questions: { question: { id: string; question: string }; answer: { answer: string } | null }[];
}

describe("the return channel with a real agent CLI against caesar mock-model", () => {
  for (const cli of CLIS) {
    itWith(
      pinnedAgentCli(cli),
      `${cli}: asks through the channel, gets the answer, submits its report through it`,
      async () => {
        const root = makeRepo();
        const state = tempDir(`caesar-channel-${cli}-`);
        const home = join(state, "home");
        mkdirSync(home, { recursive: true });
        const server = await startMockModel({ scenario: await loadScenario("channel") });
        try {
          const setup = mockSetupFor(cli, server.url, agentStateFor(state));
          await writeSetupFiles(setup);
          const env = {
            PATH: `${AGENT_BIN_DIR}:${process.env.PATH ?? "/usr/bin:/bin"}`,
            HOME: home,
            XDG_CONFIG_HOME: join(home, ".config"),
            XDG_DATA_HOME: join(home, ".local/share"),
            XDG_CACHE_HOME: join(home, ".cache"),
            XDG_STATE_HOME: join(home, ".local/state"),
            ...setup.env,
          };
          const started = await runCaesar(
            [
              "run",
              "--agent",
              cli,
              "--channel",
              "--detach",
              "--timeout",
              "3m",
              "--json",
              "create hello.txt containing OK",
            ],
            { cwd: root, env },
          );
          expect(started.code, started.stdout + started.stderr).toBe(0);
          const id = parseJsonOutput<{ task_id: string }>(started).task_id;
          const status = async () =>
            parseJsonOutput<StatusJson>(await runCaesar(["status", id, "--json"], { cwd: root, env }));

          let question: StatusJson["questions"][number]["question"] | undefined;
          let last: StatusJson | undefined;
          const until = Date.now() + LIVE_TIMEOUT_MS - 30_000;
          while (!question && Date.now() < until) {
            last = await status();
            if (last.state.phase === "finished") break;
            question = last.questions.find((entry) => entry.answer === null)?.question;
            if (!question) await new Promise((resolve) => setTimeout(resolve, 250));
          }
          const dir = join(root, ".caesar", "tasks", id);
          expect(
            question,
            `no question; phase ${last?.state.phase}\n${readFileSync(join(dir, "raw.log"), "utf8").slice(-3000)}`,
          ).toBeDefined();
          expect(question!.question).toBe("Proceed with hello.txt?");

          const answered = await runCaesar(["answer", id, question!.id, "yes, go ahead"], { cwd: root, env });
          expect(answered.code, answered.stderr).toBe(0);

          for (;;) {
            last = await status();
            if (last.state.phase === "finished" || Date.now() > until) break;
            await new Promise((resolve) => setTimeout(resolve, 250));
          }
          const raw = readFileSync(join(dir, "raw.log"), "utf8");
          expect(last!.state.phase, raw.slice(-3000)).toBe("finished");
          expect(last!.state.outcome, raw.slice(-3000)).toBe("succeeded");
          const report = last!.state.report!;
          expect(report.report_source, raw.slice(-3000)).toBe("channel");
          expect(report.status).toBe("success");
          expect(report.changes_verified_by).toBe("git");
          expect(report.changes.map((change) => change.path)).toEqual(["hello.txt"]);
          // The model saw the answer: its last message quotes the tool result.
          const events = readFileSync(join(dir, "events.jsonl"), "utf8");
          expect(events).toContain("yes, go ahead");
          expect(JSON.parse(readFileSync(join(dir, "channel-report.json"), "utf8"))).toMatchObject({
            protocol: "caesar.report/v1",
            task_id: id,
            summary: "Created hello.txt containing OK.",
          });
        } finally {
          await server.close();
        }
      },
      LIVE_TIMEOUT_MS,
    );
  }
});
