import type { CommandDefinition } from "./command.js";
import { applyCommand } from "./commands/apply.js";
import { cancelCommand } from "./commands/cancel.js";
import { demoCommand } from "./commands/demo.js";
import { diffCommand } from "./commands/diff.js";
import { gcCommand } from "./commands/gc.js";
import { logsCommand } from "./commands/logs.js";
import { protocolCommand } from "./commands/protocol.js";
import { psCommand } from "./commands/ps.js";
import { runCommand } from "./commands/run.js";
import { statusCommand } from "./commands/status.js";
import { watchCommand } from "./commands/watch.js";

/** Every top-level command, sorted by name; `caesar --help` groups them by use. */
export const COMMANDS: CommandDefinition[] = [
  applyCommand,
  cancelCommand,
  demoCommand,
  diffCommand,
  gcCommand,
  logsCommand,
  protocolCommand,
  psCommand,
  runCommand,
  statusCommand,
  watchCommand,
].sort((a, b) => a.name.localeCompare(b.name));
