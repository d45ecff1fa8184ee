import { rm } from "node:fs/promises";
import { stringify } from "smol-toml";
import type { CustomAgentConfig } from "../../config/schema.js";
import { askRunningService } from "../../engine/conductor/service-client.js";
import { isProcessAlive } from "../../support/process.js";
import { shellQuote as quote } from "../../support/shell-quote.js";
import { makeThrowawayRepository } from "../run/throwaway-repo.js";
import type { Subject } from "./subject.js";

/** The member the probe adds to task.json: no version of caesar.task/v1 defines it. */
export const UNKNOWN_MEMBER = "x_conformance_probe";

/** Where the probe lives in the kit's repository (committed, so it is never part of a task's diff). */
const PROBE_PATH = ".caesar/conformance/probe.sh";

/**
 * The kit's throwaway repository: one commit holding a README and the configuration that declares the
 * agent under test, unsandboxed — and its probe, the same program behind a wrapper that adds an unknown member to
 * task.json before it starts. Every scenario is a task of its own in a worktree of its own.
 */
export function makeKitRepository(subject: Subject): string {
  const agents: CustomAgentConfig[] = [];
  if (subject.declaration) agents.push(subject.declaration);
  const files: Record<string, string> = {
    "README.md": "# conformance\n\nA throwaway repository made by `caesar conformance`.\n",
  };
  if (subject.program) {
    // A path with a slash is from the project root (custom-bin.ts).
    agents.push({ id: probeIdOf(subject), bin: PROBE_PATH, ...subject.program.entry });
    files[PROBE_PATH] = probeScript(subject.program.bin, subject.program.args);
  }
  const declared = agents.length > 0 ? `${stringify({ agent: agents })}\n` : "";
  // The agent is judged on what it does itself, so it runs without caesar's OS sandbox: the kernel would
  // refuse its write in read-only mode for it (a false pass of read-only), and the probe's rewrite of
  // task.json (which the sandbox binds read-only).
  files[".caesar/config.toml"] =
    `# Written by caesar conformance.\n# The agent is judged on what it does itself: no OS sandbox.\n[sandbox]\nmode = "off"\n\n${declared}`;
  return makeThrowawayRepository("caesar-conformance-", files, "conformance: initial commit", [PROBE_PATH]);
}

/** The agent id of the subject's probe. */
export function probeIdOf(subject: Subject): string {
  return `${subject.agent}-probe`;
}

/** A shell script: add the unknown member to $CAESAR_TASK_FILE (atomically), then become the program. */
function probeScript(bin: string, args: string[]): string {
  const addMember = [
    'const fs = require("node:fs");',
    "const file = process.env.CAESAR_TASK_FILE;",
    'const task = JSON.parse(fs.readFileSync(file, "utf8"));',
    `task[${JSON.stringify(UNKNOWN_MEMBER)}] = { note: "a member no version of caesar.task/v1 defines", values: [1, "two", null] };`,
    'fs.writeFileSync(file + ".probe.tmp", JSON.stringify(task, null, 2));',
    'fs.renameSync(file + ".probe.tmp", file);',
  ].join(" ");
  return [
    "#!/bin/sh",
    "# caesar conformance: task.json gets a member it does not define, then the agent under test runs.",
    `${quote(process.execPath)} -e ${quote(addMember)} || exit 97`,
    `exec ${[bin, ...args].map(quote).join(" ")} "$@"`,
    "",
  ].join("\n");
}

/**
 * Remove the kit's repository once its conductor service has stopped (it conducts no task by then), so no
 * process of the kit outlives it.
 */
export async function removeKitRepository(repo: string): Promise<void> {
  const response = await askRunningService(repo, { op: "stop", now: false }, 5_000).catch(() => undefined);
  const pid = response?.ok ? response.status?.pid : undefined;
  const until = Date.now() + 15_000;
  while (pid !== undefined && isProcessAlive(pid) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await rm(repo, { recursive: true, force: true });
}
