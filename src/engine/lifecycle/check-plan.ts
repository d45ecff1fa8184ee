import { existsSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import type { EffectiveConfig } from "../../config/effective.js";
import type { FollowUp, RoleConfig } from "../../config/schema.js";
import { parseDuration } from "../../support/duration.js";
import { UsageError } from "../../support/errors.js";
import { findExecutable } from "../../support/executable-path.js";
import { type PlannedCheck, runCriterionCommand } from "../store/task-plan.js";

import { type DelegationRequest, MAX_ATTEMPTS } from "./request.js";

/** What a request asks of checks (the parse bounds each; the configuration's values are checked here). */
export type ChecksRequest = Pick<
  DelegationRequest,
  "checks" | "acceptance_criteria" | "check_timeout" | "attempts" | "follow_up"
>;

export interface ResolvedChecks {
  checks: PlannedCheck[];
  check_timeout_ms: number;
  attempts: number;
  follow_up: FollowUp;
}

/**
 * The task's checks, from the person (the request, its `run:` acceptance criteria) and the configuration
 * (the role's `checks`, else `[checks] default`) — never from the agent. Each must be a command whose
 * program exists: a check that cannot run is refused here, before anything starts.
 */
export function resolveChecks(
  request: ChecksRequest,
  context: {
    config: EffectiveConfig;
    role: RoleConfig | undefined;
    workspace: string;
    env: NodeJS.ProcessEnv;
  },
): ResolvedChecks {
  const { config, role } = context;
  const planned: PlannedCheck[] = [];
  const add = (command: string, from: string, label: string) => {
    const trimmed = command.trim();
    if (trimmed === "") {
      throw new UsageError("check_empty", `${label} is empty: a check is a command.`, {
        detail: 'Give a command whose exit code 0 means the work holds, e.g. --check "npm test".',
      });
    }
    assertRunnable(trimmed, label, context.workspace, context.env);
    if (!planned.some((check) => check.command === trimmed)) planned.push({ command: trimmed, from });
  };
  const configured = role?.checks
    ? { list: role.checks, from: `role:${role.name}`, label: `of role "${role.name}"` }
    : { list: config.checks.default.value, from: "config", label: "of [checks] default" };
  for (const [i, command] of configured.list.entries())
    add(command, configured.from, `Check ${i + 1} ${configured.label}`);
  for (const [i, command] of (request.checks ?? []).entries())
    add(command, "request", `Check ${i + 1} (${JSON.stringify(command)})`);
  for (const criterion of request.acceptance_criteria ?? []) {
    const command = runCriterionCommand(criterion);
    if (command !== undefined)
      add(command, "acceptance", `The acceptance criterion ${JSON.stringify(criterion)}`);
  }

  const attempts = request.attempts ?? config.checks.attempts.value;
  if (!Number.isInteger(attempts) || attempts < 1 || attempts > MAX_ATTEMPTS) {
    throw new UsageError("invalid_attempts", `Invalid attempts ${JSON.stringify(attempts)}.`, {
      detail: `Give a whole number from 1 to ${MAX_ATTEMPTS}.`,
    });
  }
  if (request.attempts !== undefined && request.attempts > 1 && planned.length === 0) {
    throw new UsageError("attempts_without_checks", `--attempts ${request.attempts} needs checks.`, {
      detail:
        'A second attempt is given only when checks fail: add --check "<command>" (or a `run: <command>` acceptance criterion, or [checks] default in .caesar/config.toml).',
    });
  }
  const checkTimeoutMs =
    request.check_timeout ?? parseDuration(config.checks.timeout.value, "[checks] timeout");
  return {
    checks: planned,
    check_timeout_ms: checkTimeoutMs,
    attempts,
    follow_up: request.follow_up ?? config.checks.follow_up.value,
  };
}

/** Shell words that are not programs on PATH: keywords and builtins of `sh`. */
const SHELL_WORDS = new Set(
  (
    ": . [ alias bg break case cd command continue do done echo elif else esac eval exec exit export false fc fg " +
    "fi for function getopts hash if in jobs kill local printf pwd read readonly return set shift source test " +
    "then times trap true type ulimit umask unalias unset until wait while"
  ).split(" "),
);

/**
 * Refuse a check whose first program does not exist. Only the first program of the command is looked at
 * (after `NAME=value` assignments); a command that starts with a subshell, a variable or a glob is left to
 * the shell, which says itself when something is missing.
 */
function assertRunnable(command: string, label: string, workspace: string, env: NodeJS.ProcessEnv): void {
  const program = firstProgram(command);
  if (program === undefined || SHELL_WORDS.has(program)) return;
  const found = program.includes("/")
    ? existsSync(isAbsolute(program) ? program : join(workspace, program))
    : findExecutable(program, env) !== undefined;
  if (found) return;
  throw new UsageError(
    "check_not_a_command",
    `${label} is not a command: \`${program}\` was not found${program.includes("/") ? "" : " on PATH"}.`,
    {
      detail: `The check was \`${command}\`. Checks run with \`sh -c\` in the task's workspace; name a program that exists before the agent starts (a script the agent will write can be run as \`sh ./script.sh\`).`,
    },
  );
}

/** The first word of a shell command that names a program, unquoted; undefined when it cannot be told. */
export function firstProgram(command: string): string | undefined {
  let rest = command.trimStart();
  for (;;) {
    const word = readWord(rest);
    if (word === undefined) return undefined;
    // NAME=value before the program sets its environment.
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word.raw)) {
      rest = rest.slice(word.length).trimStart();
      continue;
    }
    return word.dynamic ? undefined : word.text;
  }
}

/** One shell word at the start of `text`: its unquoted text, its length, and whether it expands. */
function readWord(text: string): { text: string; raw: string; length: number; dynamic: boolean } | undefined {
  let out = "";
  let dynamic = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c) || ";&|()<>".includes(c)) break;
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end === -1) return undefined;
      out += text.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      const end = text.indexOf('"', i + 1);
      if (end === -1) return undefined;
      const inner = text.slice(i + 1, end);
      if (/[$`\\]/.test(inner)) dynamic = true;
      out += inner;
      i = end + 1;
    } else if (c === "\\") {
      out += text[i + 1] ?? "";
      i += 2;
    } else {
      if ("$`*?[{~!".includes(c)) dynamic = true;
      out += c;
      i += 1;
    }
  }
  if (i === 0) return undefined;
  return { text: out, raw: text.slice(0, i), length: i, dynamic };
}
