import type { CommandDefinition } from "./command.js";
import { protocolCommand } from "./commands/protocol.js";
import { watchCommand } from "./commands/watch.js";

/** Every top-level command, sorted by name; `caesar --help` groups them by use. */
export const COMMANDS: CommandDefinition[] = [protocolCommand, watchCommand].sort((a, b) =>
  a.name.localeCompare(b.name),
);
