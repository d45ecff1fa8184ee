import type { ChannelServer } from "../../agents/adapter.js";
import type { Channel } from "../../protocol/task.js";
import { CAESAR_BIN } from "../../support/package-paths.js";

export const RETURN_CHANNEL_TOOLS = ["get_task", "report_progress", "ask_orchestrator", "submit_report"];

/** How an agent CLI starts this task's return channel: `caesar return-channel serve --task-dir <dir>` over stdio. */
export function returnChannelFor(dir: string): ChannelServer & { coordinates: Channel } {
  const args = [CAESAR_BIN, "return-channel", "serve", "--task-dir", dir];
  return {
    name: "caesar",
    command: process.execPath,
    args,
    env: { CAESAR_CHANNEL_TASK_DIR: dir },
    tools: RETURN_CHANNEL_TOOLS,
    coordinates: { transport: "mcp-stdio", command: process.execPath, args, tools: RETURN_CHANNEL_TOOLS },
  };
}
