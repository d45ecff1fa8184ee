/** The CLI's entry point as an ES module (dist/cli/main.js, loaded by bin/caesar.js); see program.ts. */
import { launchRelay } from "../cluster/relay/launch.js";
import { setRelayLauncher } from "../engine/conductor/relay.js";
import { flushTelemetry, hasRecordedSpans } from "../support/telemetry/spans.js";
import { brokerSocket, relayThroughBroker } from "./broker-client.js";
import { main } from "./program.js";
import { COMMANDS } from "./registry.js";

const CLI_FLUSH_MS = 1000;

// The engine starts a remote task's relay again (a reader finding it gone) through the cluster's launcher.
setRelayLauncher(launchRelay);

// A sandboxed agent's command that needs caesar's records goes through its task's broker.
const broker = brokerSocket(process.argv);
process.exitCode = broker
  ? await relayThroughBroker(broker, process.argv.slice(2))
  : await main(process.argv, COMMANDS);
// A command that recorded spans (`caesar apply`'s) gives them a bounded time, then exits: an export still
// waiting on a collector that does not answer must not keep the command alive.
if (hasRecordedSpans()) {
  await flushTelemetry(CLI_FLUSH_MS);
  await Promise.all(
    [process.stdout, process.stderr].map((stream) => new Promise((done) => stream.write("", done))),
  );
  process.exit();
}
