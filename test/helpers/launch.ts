import { join } from "node:path";
import type { ChannelServer, LaunchContext, ToolLists } from "../../src/agents/adapter.js";
import { type Mode, TaskSchema } from "../../src/protocol/task.js";
import { makeCaesarEnv, taskPaths } from "../../src/protocol/task-dir.js";

export interface LaunchOptions {
  agent: string;
  workspace: string;
  taskDir: string;
  mode?: Mode;
  network?: boolean;
  model?: string;
  channel?: ChannelServer;
  prompt?: string;
  extraArgs?: string[];
  env?: Record<string, string>;
  taskId?: string;
  tools?: ToolLists;
  /** Continue this session of the CLI instead of starting one. */
  resume?: string;
}

/** A LaunchContext the way the engine builds one: task.json content, paths, CAESAR_* environment. */
export function makeLaunch(options: LaunchOptions): LaunchContext {
  const id = options.taskId ?? "t_live0001";
  const paths = taskPaths(options.taskDir);
  const mode = options.mode ?? "write";
  const task = TaskSchema.parse({
    protocol: "caesar.task/v1",
    id,
    created_at: new Date().toISOString(),
    agent: options.agent,
    objective: options.prompt ?? "Create hello.txt containing OK",
    mode,
    isolation: "worktree",
    network: options.network ?? true,
    workspace: options.workspace,
    report_path: paths.report,
    events_path: paths.events,
  });
  const caesarEnv = makeCaesarEnv({ dir: options.taskDir, taskId: id, agent: options.agent, depth: 1 });
  return {
    task,
    paths,
    prompt: options.prompt ?? "Create hello.txt containing OK",
    mode,
    network: options.network ?? true,
    tools: options.tools ?? { allowed: null, excluded: [] },
    model: options.model,
    extraArgs: options.extraArgs ?? [],
    channel: options.channel,
    extraDirs: [options.taskDir],
    runtimeDir: join(options.taskDir, "runtime"),
    env: { ...options.env, ...caesarEnv },
    ...(options.resume ? { resume: options.resume } : {}),
  };
}
