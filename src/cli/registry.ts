import type { CommandDefinition } from "./command.js";
import { chatCommand } from "./commands/chat.js";
import { protocolCommand } from "./commands/protocol.js";

/** Every top-level command, sorted by name; `caesar --help` groups them by use. */
export const COMMANDS: CommandDefinition[] = [chatCommand, protocolCommand].sort((a, b) =>
  a.name.localeCompare(b.name),
);
