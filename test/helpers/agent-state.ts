import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";

/**
 * Where a live test keeps an agent CLI's own state (CODEX_HOME and the like) for the run in `dir`: outside
 * every temporary directory. codex 0.171, once bubblewrap is installed, runs its commands through it and
 * refuses to create its helper binaries under a temporary directory ("Refusing to create helper binaries
 * under temporary dir"): with its home under $TMPDIR every command it runs fails. The folder is made by
 * test/global-setup.ts ($CAESAR_TEST_STATE, under ~/.cache) and removed with the run.
 */
export function agentStateFor(dir: string): string {
  const state = join(process.env.CAESAR_TEST_STATE ?? tmpdir(), basename(dir), "mock-state");
  mkdirSync(state, { recursive: true });
  return state;
}
