import { chmodSync, copyFileSync, existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { REQUIREMENTS } from "../../src/cli/conformance/requirements.js";
import { type CliResult, parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { FIXTURE_BIN, makeRepo, tempDir, writeConfig } from "../helpers/repo.js";

const BROKEN = fileURLToPath(new URL("../fixtures/conformance/", import.meta.url));
/** A kit run is six tasks; the deadline scenario alone waits for a deadline and, for a deaf agent, the grace. */
const KIT_TIMEOUT_MS = 150_000;

interface Card {
  agent: string;
  kind: string;
  level: string;
  passed: boolean;
  levels: Record<string, { passed: boolean; failed: string[] }>;
  requirements: {
    id: string;
    level: string;
    title: string;
    field: string;
    doc: string;
    verdict: "pass" | "fail" | "skip";
    expected?: string;
    observed?: string;
    tasks: string[];
  }[];
  scenarios: {
    name: string;
    task_id: string;
    outcome: string | null;
    exit: string;
    report_source: string | null;
  }[];
  repo: string | null;
}

async function conformance(args: string[]): Promise<{ result: CliResult; card: Card }> {
  const result = await runCaesar(["conformance", ...args, "--json"], {
    cwd: tempDir("caesar-conformance-cwd-"),
    timeoutMs: KIT_TIMEOUT_MS,
  });
  return { result, card: parseJsonOutput<Card>(result) };
}

const failed = (card: Card) => card.requirements.filter((r) => r.verdict === "fail").map((r) => r.id);

describe("caesar conformance", () => {
  it(
    "passes the bundled reference agent at the extended level, every requirement checked",
    async () => {
      const { result, card } = await conformance(["reference", "--level", "extended"]);
      expect(result.code, result.stderr).toBe(0);
      expect(card).toMatchObject({ agent: "reference", kind: "program", level: "extended", passed: true });
      expect(card.levels).toEqual({
        core: { passed: true, failed: [] },
        extended: { passed: true, failed: [] },
      });
      expect(card.requirements.map((r) => [r.id, r.verdict])).toEqual(
        REQUIREMENTS.map((r) => [r.id, "pass"]),
      );
      // The deadline was really met by stopping on SIGTERM, not by finishing early.
      expect(card.scenarios.find((s) => s.name === "deadline")).toMatchObject({
        outcome: "timed_out",
        exit: "SIGTERM",
      });
      expect(card.scenarios.map((s) => s.name)).toEqual([
        "basic",
        "read-only",
        "failure",
        "deadline",
        "unknown-field",
        "question",
      ]);
      // Nothing of the kit is left behind without --keep.
      expect(card.repo).toBeNull();
    },
    KIT_TIMEOUT_MS,
  );

  it(
    "passes the ten-line bash agent of the docs at core, not at extended, and says which requirements",
    async () => {
      const { result, card } = await conformance([
        "--bin",
        join(FIXTURE_BIN, "seed-agent.sh"),
        "--level",
        "extended",
      ]);
      expect(result.code).toBe(1);
      expect(card.levels.core).toEqual({ passed: true, failed: [] });
      expect(card.levels.extended).toEqual({ passed: false, failed: ["full-report", "events", "question"] });
      const events = card.requirements.find((r) => r.id === "events")!;
      expect(events).toMatchObject({
        observed: "no event",
        doc: "docs/protocol.md#eventsjsonl--caesareventv1",
      });
    },
    KIT_TIMEOUT_MS,
  );

  it(
    "checks an agent of the project's configuration, its bin a path from the project root",
    async () => {
      const project = makeRepo();
      mkdirSync(join(project, "tools"));
      copyFileSync(join(FIXTURE_BIN, "conformant.sh"), join(project, "tools", "agent.sh"));
      chmodSync(join(project, "tools", "agent.sh"), 0o755);
      writeConfig(project, '[[agent]]\nid = "mine"\nbin = "./tools/agent.sh"\n');
      const result = await runCaesar(["conformance", "mine", "--json"], {
        cwd: project,
        timeoutMs: KIT_TIMEOUT_MS,
      });
      const card = parseJsonOutput<Card>(result);
      expect(result.code, result.stderr).toBe(0);
      expect(card).toMatchObject({ agent: "mine", kind: "program", level: "core", passed: true });
      // The kit works in a repository of its own: the project gets no task.
      expect(existsSync(join(project, ".caesar", "tasks"))).toBe(false);
    },
    KIT_TIMEOUT_MS,
  );

  // Each broken agent fails exactly the requirement it breaks, with what was expected and what it did.
  const broken: [string, string, RegExp][] = [
    ["no-report.sh", "report", /no report/],
    ["invalid-report.sh", "report", /\$\.status: expected one of/],
    ["writes-in-read-only.sh", "read-only", /added notes\.txt/],
    ["ignores-term.sh", "deadline", /SIGKILL/],
    ["lies-about-changes.sh", "changes", /conformance\/made-up\.txt/],
    ["exit-lies.sh", "exit-status", /exit 3 with success/],
  ];
  for (const [script, requirement, observed] of broken) {
    it(
      `${script} fails ${requirement} and nothing else (exit 1)`,
      async () => {
        const { result, card } = await conformance(["--bin", join(BROKEN, script)]);
        expect(result.code).toBe(1);
        expect(card.level).toBe("core");
        expect(failed(card)).toEqual([requirement]);
        expect(card.levels).toEqual({ core: { passed: false, failed: [requirement] } });
        const failure = card.requirements.find((r) => r.id === requirement)!;
        expect(failure.observed).toMatch(observed);
        expect(failure.expected).toBeTruthy();
        expect(
          existsSync(fileURLToPath(new URL(`../../${failure.doc.split("#")[0]}`, import.meta.url))),
        ).toBe(true);
        expect(failure.tasks.length).toBeGreaterThan(0);
      },
      KIT_TIMEOUT_MS,
    );
  }

  it(
    "bad-events.sh passes core and fails extended on events alone, naming the lines",
    async () => {
      const { result, card } = await conformance([
        "--bin",
        join(BROKEN, "bad-events.sh"),
        "--level",
        "extended",
      ]);
      expect(result.code).toBe(1);
      expect(card.levels).toEqual({
        core: { passed: true, failed: [] },
        extended: { passed: false, failed: ["events"] },
      });
      const events = card.requirements.find((r) => r.id === "events")!;
      expect(events.observed).toMatch(/line \d+: \$\.seq/);
      expect(events.observed).toMatch(/line \d+: \$: not valid JSON/);
    },
    KIT_TIMEOUT_MS,
  );

  it(
    "does not hang on an agent that leaves a FIFO where the kit reads its report, and says the report is not there",
    async () => {
      const { card } = await conformance(["--bin", join(BROKEN, "fifo-after-finish.sh")]);
      // It ended (the kit's own timeout did not fire), and judged what it could read.
      expect(card.requirements.length).toBeGreaterThan(0);
    },
    KIT_TIMEOUT_MS,
  );

  it(
    "prints a scorecard for people: each requirement, and for a failure what to read",
    async () => {
      const result = await runCaesar(["conformance", "--bin", join(BROKEN, "lies-about-changes.sh")], {
        cwd: tempDir("caesar-conformance-cwd-"),
        timeoutMs: KIT_TIMEOUT_MS,
      });
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(/PASS {2}report/);
      expect(result.stdout).toMatch(/FAIL {2}changes/);
      expect(result.stdout).toContain("read:     docs/engine.md#reconciliation-the-diff-is-the-truth");
      expect(result.stdout).toContain("OACP core: failed (changes)");
      expect(result.stderr).toContain("scenario basic:");
    },
    KIT_TIMEOUT_MS,
  );

  it("refuses a command line without exactly one agent, and an unknown level, as usage errors", async () => {
    const none = await runCaesar(["conformance", "--json"], { cwd: tempDir() });
    expect(none.code).toBe(2);
    expect(parseJsonOutput<{ error: { code: string } }>(none).error.code).toBe("conformance_subject");
    const both = await runCaesar(["conformance", "reference", "--bin", "x", "--json"], { cwd: tempDir() });
    expect(parseJsonOutput<{ error: { code: string } }>(both).error.code).toBe("conformance_subject");
    const level = await runCaesar(["conformance", "reference", "--level", "gold", "--json"], {
      cwd: tempDir(),
    });
    expect(level.code).toBe(2);
    expect(parseJsonOutput<{ error: { code: string } }>(level).error.code).toBe("invalid_level");
  });

  it("refuses an agent that is not there before making anything: a CLI off PATH, a --bin that is no program", async () => {
    // PATH holds node (the launcher needs it) and the system's programs: no agent CLI.
    const env = { PATH: `${dirname(process.execPath)}:/usr/bin:/bin` };
    const cli = await runCaesar(["conformance", "codex", "--json"], { cwd: tempDir(), env });
    expect(cli.code).toBe(2);
    expect(parseJsonOutput<{ error: { code: string } }>(cli).error.code).toBe("conformance_agent_missing");
    const bin = await runCaesar(["conformance", "--bin", "./no-such-agent.sh", "--json"], { cwd: tempDir() });
    expect(bin.code).toBe(2);
    const body = parseJsonOutput<{ error: { code: string; detail: string } }>(bin);
    expect(body.error.code).toBe("conformance_agent_missing");
    expect(body.error.detail).toContain("no-such-agent.sh");
  });

  it("refuses an agent it cannot drive, saying which it can", async () => {
    const result = await runCaesar(["conformance", "antigravity", "--json"], { cwd: tempDir() });
    expect(result.code).toBe(2);
    const body = parseJsonOutput<{ error: { code: string; detail: string } }>(result);
    expect(body.error.code).toBe("conformance_unsupported");
    expect(body.error.detail).toContain("--bin");
  });
});
