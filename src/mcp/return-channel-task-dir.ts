import { statSync } from "node:fs";
import { basename, isAbsolute, resolve } from "node:path";
import { readTaskFile } from "../engine/store/task-store.js";
import { isValidTaskId } from "../protocol/ids.js";
import type { Task } from "../protocol/task.js";
import { UsageError } from "../support/errors.js";

/** The one variable the channel reads: its own, set in the per-server env block of the agent CLI's config. */
export const CHANNEL_TASK_DIR_ENV = "CAESAR_CHANNEL_TASK_DIR";

export interface ChannelTask {
  dir: string;
  task: Task;
}

/**
 * The task directory the return channel serves: from `--task-dir`, else from CAESAR_CHANNEL_TASK_DIR —
 * never from the inherited CAESAR_TASK_DIR, which belongs to whatever agent started the CLI. It must be
 * a real task directory: its task.json is a valid caesar.task/v1 whose id is the directory's name.
 */
export async function resolveReturnChannelTask(
  argument: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<ChannelTask> {
  const given = argument ?? env[CHANNEL_TASK_DIR_ENV];
  if (given === undefined || given === "") {
    throw new UsageError("channel_task_dir_missing", "No task directory for the return channel.", {
      detail: `Pass --task-dir <dir> (or set ${CHANNEL_TASK_DIR_ENV} in this server's own env). caesar writes both into task.json's channel coordinates.`,
    });
  }
  const dir = isAbsolute(given) ? given : resolve(given);
  const refuse = (why: string) =>
    new UsageError("channel_task_dir_invalid", `${dir} is not a caesar task directory: ${why}.`, {
      detail:
        "Start the channel with the coordinates of the task's task.json (`channel.command` and `channel.args`).",
    });
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw refuse("no such directory");
  if (!isValidTaskId(basename(dir))) throw refuse("its name is not a task id");
  let task: Task | undefined;
  try {
    task = await readTaskFile(dir);
  } catch (error) {
    throw refuse(`task.json is invalid (${(error as Error).message})`);
  }
  if (!task) throw refuse("it has no task.json");
  if (task.id !== basename(dir)) throw refuse(`task.json's id ${task.id} is not the directory's name`);
  return { dir, task };
}
