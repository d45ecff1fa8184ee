import { messageOf } from "../../support/errors.js";
import type { ProcessExit, SessionDriver, StreamOutcome } from "../adapter.js";

/**
 * A session driver loaded when its agent starts, not when the adapter is read: the ACP client and the SDK
 * under it cost every process that lists the agents (each front end, the service) about 12 MiB and 50 ms
 * (bench/run.mjs). What the agent writes before the client is loaded waits here, in order.
 */
export function lazyDriver(
  load: () => Promise<SessionDriver>,
  failed: (error: unknown) => void,
): SessionDriver {
  const early: { stream: "stdout" | "stderr"; line: string }[] = [];
  let driver: SessionDriver | undefined;
  const ready = load().then((loaded) => {
    driver = loaded;
    for (const { stream, line } of early.splice(0))
      stream === "stdout" ? loaded.stdout(line) : loaded.stderr?.(line);
    return loaded;
  });
  // A client that cannot be loaded (caesar's files replaced under a running service) would leave the agent
  // waiting for a first message forever: `failed` ends the session, and finish() fails the run saying why.
  ready.catch(failed);
  return {
    stdout: (line) => (driver ? driver.stdout(line) : early.push({ stream: "stdout", line })),
    stderr: (line) => (driver ? driver.stderr?.(line) : early.push({ stream: "stderr", line })),
    async finish(exit: ProcessExit): Promise<StreamOutcome> {
      let loaded: SessionDriver;
      try {
        loaded = await ready;
      } catch (error) {
        // The agent never got its prompt: whatever its exit says, the run failed, and says why.
        return {
          failure: {
            message: `caesar could not load its ACP client, so the agent was never given the task (${messageOf(error)}). caesar's files were replaced while its service ran (an upgrade or a rebuild): run the task again.`,
            code: "agent_error",
          },
          processOutcome: "failed",
          stdoutIsProtocol: true,
        };
      }
      return loaded.finish(exit);
    },
  };
}
