import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { CAESAR_BIN, type CliResult, parseJsonOutput, runCaesar } from "./cli.js";
import { FIXTURE_BIN, git, makeRepo, taskDir, taskRecordDir, tempDir, writeFiles } from "./repo.js";

export const ADVERSARY = join(FIXTURE_BIN, "adversary");
export const DELEGATOR = join(FIXTURE_BIN, "delegator.mjs");

/** One attempt as an adversary fixture recorded it (see test/fixtures/bin/adversary/lib.mjs). */
export interface Attempt {
  via: "cli" | "mcp";
  args?: unknown;
  tool?: string;
  exit?: number | null;
  isError?: boolean;
  code: string | null;
  summary: string | null;
  detail?: string | null;
  text?: string;
  result: Record<string, unknown> | null;
  stderr?: string;
}

export interface Details {
  attempts: Attempt[];
  [key: string]: unknown;
}

/**
 * A real repository whose configuration declares the given agents (fixture programs by path), with
 * `body` on top. Its global configuration is an empty private directory, so nobody's own rules leak in.
 * The agents run without caesar's OS sandbox: these attacks are on what caesar guarantees for every agent
 * (docs/threat-model.md), which an unsandboxed one tests — under the sandbox its broker names the caller
 * and the kernel refuses the writes before caesar sees them (test/sandbox/ tries those).
 */
export function adversaryProject(
  body: string,
  agents: Record<string, string>,
): { root: string; env: NodeJS.ProcessEnv } {
  const root = makeRepo({ "README.md": "# the user's project\n", "src/app.txt": "the user's code\n" });
  const declared = Object.entries(agents)
    .map(([id, bin]) => `[[agent]]\nid = "${id}"\nbin = "${bin}"\n`)
    .join("\n");
  writeFiles(root, { ".caesar/config.toml": `[sandbox]\nmode = "off"\n\n${body}\n${declared}` });
  git(root, "add", ".caesar/config.toml");
  git(root, "commit", "-qm", "caesar config");
  const xdg = tempDir("caesar-xdg-");
  return { root, env: { CAESAR_BIN, XDG_CONFIG_HOME: xdg } };
}

export function fixture(name: string): string {
  return join(ADVERSARY, `${name}.mjs`);
}

export function stateOf(root: string, id: string) {
  return JSON.parse(readFileSync(join(taskRecordDir(root, id), "state.json"), "utf8"));
}

export function detailsOf(root: string, id: string): Details {
  const state = stateOf(root, id);
  expect(state.report?.details, `task ${id} has no details: ${JSON.stringify(state.report)}`).toBeTruthy();
  return JSON.parse(state.report.details) as Details;
}

export function eventsOf(root: string, id: string): { type: string; code?: string; message?: string }[] {
  const path = join(taskDir(root, id), "events.jsonl");
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}

/** The codes of the `error` events caesar appended to a task's events for what it refused. */
export function refusedCodes(root: string, id: string): string[] {
  return eventsOf(root, id)
    .filter((event) => event.type === "error" && event.message?.startsWith("caesar refused"))
    .map((event) => event.code ?? "");
}

export function findingsOf(root: string, id: string): { severity: string; title: string; detail?: string }[] {
  return stateOf(root, id).report?.findings ?? [];
}

/** Every task directory of the project (what a refusal must not have added to). */
export function taskIds(root: string): string[] {
  const dir = join(root, ".caesar", "tasks");
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((name) => name.startsWith("t_"))
        .sort()
    : [];
}

/** The user's working tree as it was: nothing staged, nothing changed, the same HEAD. */
export function expectUntouched(root: string, head: string): void {
  expect(git(root, "status", "--porcelain")).toBe("");
  expect(git(root, "rev-parse", "HEAD")).toBe(head);
}

/** Run a root task with `caesar run --json` (as the person), returning its id and final result. */
export async function runRoot(
  root: string,
  env: NodeJS.ProcessEnv,
  args: string[],
  timeoutMs = 180_000,
): Promise<{ id: string; result: CliResult }> {
  const result = await runCaesar(["run", "--json", ...args], { cwd: root, env, timeoutMs });
  const id = parseJsonOutput<{ task_id: string }>(result).task_id;
  expect(id, result.stderr).toBeTruthy();
  return { id, result };
}

/** The ids a delegator parent's calls produced (its report's details). */
export function callsOf(
  root: string,
  id: string,
): { agent: string; task_id: string | null; error: unknown }[] {
  return JSON.parse(stateOf(root, id).report.details);
}
