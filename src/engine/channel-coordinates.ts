import { fileURLToPath } from "node:url";
import type { ChannelServer } from "../agents/adapter.js";
import type { Channel } from "../protocol/task.js";

export const CHANNEL_TOOLS = ["get_task", "report_progress", "ask_orchestrator", "submit_report"];

/** The caesar executable, as a node script path (the conductor runs from dist/). */
const CAESAR_BIN = fileURLToPath(new URL("../../bin/caesar.js", import.meta.url));

/** How an agent CLI starts this task's return channel: `caesar channel serve --task-dir <dir>` over stdio. */
export function channelFor(dir: string): ChannelServer & { coordinates: Channel } {
  const args = [CAESAR_BIN, "channel", "serve", "--task-dir", dir];
  return {
    name: "caesar",
    command: process.execPath,
    args,
    env: { CAESAR_CHANNEL_TASK_DIR: dir },
    coordinates: { transport: "mcp-stdio", command: process.execPath, args, tools: CHANNEL_TOOLS },
  };
}
