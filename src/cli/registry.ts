import type { CommandDefinition } from "./command.js";
import { acpCommand } from "./commands/acp.js";
import { agentsCommand } from "./commands/agents.js";
import { answerCommand } from "./commands/answer.js";
import { applyCommand } from "./commands/apply.js";
import { cancelCommand } from "./commands/cancel.js";
import { chatCommand } from "./commands/chat.js";
import { clusterCommand } from "./commands/cluster.js";
import { conformanceCommand } from "./commands/conformance.js";
import { demoCommand } from "./commands/demo.js";
import { diffCommand } from "./commands/diff.js";
import { doctorCommand } from "./commands/doctor.js";
import { gcCommand } from "./commands/gc.js";
import { initCommand } from "./commands/init.js";
import { logsCommand } from "./commands/logs.js";
import { mcpCommand } from "./commands/mcp.js";
import { mockModelCommand } from "./commands/mock-model.js";
import { policyCommand } from "./commands/policy.js";
import { protocolCommand } from "./commands/protocol.js";
import { psCommand } from "./commands/ps.js";
import { queryCommand } from "./commands/query.js";
import { raceCommand } from "./commands/race.js";
import { returnChannelCommand } from "./commands/return-channel.js";
import { roleCommand } from "./commands/role.js";
import { runCommand } from "./commands/run.js";
import { serveCommand } from "./commands/serve.js";
import { serviceCommand } from "./commands/service.js";
import { statusCommand } from "./commands/status.js";
import { watchCommand } from "./commands/watch.js";
import { workerCommand } from "./commands/worker.js";

/** Every top-level command, sorted by name; `caesar --help` groups them by use. */
export const COMMANDS: CommandDefinition[] = [
  queryCommand,
  acpCommand,
  agentsCommand,
  answerCommand,
  applyCommand,
  cancelCommand,
  returnChannelCommand,
  chatCommand,
  clusterCommand,
  conformanceCommand,
  demoCommand,
  diffCommand,
  doctorCommand,
  gcCommand,
  initCommand,
  logsCommand,
  mockModelCommand,
  policyCommand,
  mcpCommand,
  protocolCommand,
  psCommand,
  raceCommand,
  roleCommand,
  runCommand,
  serveCommand,
  serviceCommand,
  statusCommand,
  watchCommand,
  workerCommand,
].sort((a, b) => (a.name < b.name ? -1 : 1));
