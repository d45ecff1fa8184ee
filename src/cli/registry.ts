import type { CommandDefinition } from "./command.js";
import { protocolCommand } from "./commands/protocol.js";

/** Every top-level command, sorted by name; `caesar --help` groups them by use. */
export const COMMANDS: CommandDefinition[] = [protocolCommand].sort((a, b) => a.name.localeCompare(b.name));
