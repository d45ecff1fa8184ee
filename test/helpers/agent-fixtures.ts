import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ProcessExit } from "../../src/agents/adapter.js";
import type { Mode } from "../../src/protocol/task.js";

/**
 * A recorded run of a real agent CLI: its raw stdout and stderr lines in arrival order, its exit, and
 * the files it wrote for caesar (codex -o). Stored as JSONL under
 * test/fixtures/agents/<cli>/<version>/<case>.jsonl: a header line, one line per output line, an exit line.
 */
export const FIXTURES_ROOT = fileURLToPath(new URL("../fixtures/agents/", import.meta.url));

export interface FixtureHeader {
  fixture: "caesar.agent-fixture/v1";
  cli: string;
  version: string;
  case: string;
  mode: Mode;
  scenario: string;
  channel: boolean;
  /** Files the CLI wrote in the run directory, relative to it (e.g. codex-last-message.txt). */
  outputs: Record<string, string>;
}

export interface Fixture {
  header: FixtureHeader;
  lines: { stream: "stdout" | "stderr"; line: string }[];
  exit: ProcessExit;
  path: string;
}

export function fixturePath(cli: string, version: string, name: string): string {
  return join(FIXTURES_ROOT, cli, version, `${name}.jsonl`);
}

/** Replace run-specific absolute paths (temporary directories) with stable placeholders. */
export function normalizeLine(line: string, replacements: [string, string][]): string {
  let out = line;
  for (const [from, to] of replacements) out = out.split(from).join(to);
  return out;
}

export function writeFixture(fixture: Omit<Fixture, "path">): string {
  const path = fixturePath(fixture.header.cli, fixture.header.version, fixture.header.case);
  mkdirSync(dirname(path), { recursive: true });
  const body = [
    JSON.stringify(fixture.header),
    ...fixture.lines.map((entry) => JSON.stringify({ [entry.stream === "stdout" ? "o" : "e"]: entry.line })),
    JSON.stringify({ exit: fixture.exit }),
  ].join("\n");
  writeFileSync(path, `${body}\n`);
  return path;
}

export function readFixture(path: string): Fixture {
  const rows = readFileSync(path, "utf8").split("\n").filter(Boolean);
  const header = JSON.parse(rows[0]!) as FixtureHeader;
  const lines: Fixture["lines"] = [];
  let exit: ProcessExit = { code: null, signal: null };
  for (const row of rows.slice(1)) {
    const value = JSON.parse(row) as { o?: string; e?: string; exit?: ProcessExit };
    if (value.exit) exit = value.exit;
    else if (value.o !== undefined) lines.push({ stream: "stdout", line: value.o });
    else if (value.e !== undefined) lines.push({ stream: "stderr", line: value.e });
  }
  return { header, lines, exit, path };
}

/** Every recorded fixture, for every CLI and version. */
export function listFixtures(): string[] {
  if (!existsSync(FIXTURES_ROOT)) return [];
  const out: string[] = [];
  for (const cli of readdirSync(FIXTURES_ROOT)) {
    for (const version of readdirSync(join(FIXTURES_ROOT, cli))) {
      for (const file of readdirSync(join(FIXTURES_ROOT, cli, version))) {
        if (file.endsWith(".jsonl")) out.push(join(FIXTURES_ROOT, cli, version, file));
      }
    }
  }
  return out.sort();
}
