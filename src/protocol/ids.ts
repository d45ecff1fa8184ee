import { UsageError } from "../support/errors.js";
import { randomHex } from "../support/random.js";

/**
 * Task ids become directory names, so they are validated before they ever touch a path:
 * letters, digits, `_`, `-` and `.`, starting with a letter or digit, at most 128 characters,
 * never `.` or `..` segments (there are no separators to begin with).
 */
export const TASK_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export function isValidTaskId(value: unknown): value is string {
  return typeof value === "string" && TASK_ID_PATTERN.test(value) && !value.includes("..");
}

export function assertTaskId(value: unknown, what = "task id"): string {
  if (!isValidTaskId(value)) {
    throw new UsageError("invalid_task_id", `Invalid ${what} ${JSON.stringify(value)}.`, {
      detail:
        "A task id is 1–128 letters, digits, '_', '-' or '.', starting with a letter or digit (e.g. t_7f3a9c21). List tasks with `caesar ps`.",
    });
  }
  return value;
}

/**
 * A fresh task id: `t_` and eight hex digits (the hex also names the task's branch). A task sent to a
 * cluster gets sixteen (`bytes` 8): its id names it on every machine, among every submitter's tasks.
 */
export function makeTaskId(bytes = 4): string {
  return `t_${randomHex(bytes)}`;
}

/** Question ids share the task-id rules: they name files under questions/ and answers/. */
export const isValidQuestionId = isValidTaskId;

export function makeQuestionId(): string {
  return `q_${randomHex(4)}`;
}
