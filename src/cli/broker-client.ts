import { existsSync } from "node:fs";
import { connect } from "node:net";
import { BROKER_ENV } from "../engine/conductor/broker-files.js";
import { BROKERED_COMMANDS, encodeFrame, FrameReader } from "../engine/conductor/broker-wire.js";

/**
 * Inside a sandbox, caesar's records are out of reach: a command that needs them goes to the task's broker
 * (the socket its sandbox has bound, named by CAESAR_BROKER), which runs it outside as this task's nested
 * request. The socket a command would use, or undefined to run it here. (Unsetting the variable gains an
 * agent nothing: run here, the command finds no records it could write.)
 */
export function brokerSocket(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const socket = env[BROKER_ENV];
  const command = argv[2];
  if (!socket || !command || !(BROKERED_COMMANDS as readonly string[]).includes(command)) return undefined;
  return existsSync(socket) ? socket : undefined;
}

/** Run `argv` through the broker: stdin forwarded, stdout and stderr written back, its exit code returned. */
export function relayThroughBroker(socketPath: string, argv: string[]): Promise<number> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    const reader = new FrameReader(false);
    const forwardStdin = !process.stdin.isTTY;
    let exitCode: number | undefined;
    socket.on("connect", () => {
      socket.write(`${JSON.stringify({ argv, cwd: process.cwd(), stdin: forwardStdin })}\n`);
      if (!forwardStdin) return;
      process.stdin.on("data", (chunk: Buffer) => socket.write(encodeFrame("i", chunk)));
      process.stdin.on("end", () => socket.write(encodeFrame("c")));
    });
    socket.on("data", (chunk: Buffer) => {
      let frames: ReturnType<FrameReader["push"]>["frames"];
      try {
        ({ frames } = reader.push(chunk));
      } catch (error) {
        process.stderr.write(
          `caesar: the broker answered something unreadable: ${(error as Error).message}\n`,
        );
        socket.destroy();
        return;
      }
      for (const frame of frames) {
        if (frame.kind === "o") process.stdout.write(frame.data);
        else if (frame.kind === "e") process.stderr.write(frame.data);
        else if (frame.kind === "x") exitCode = Number(frame.data.toString("ascii"));
      }
    });
    socket.on("error", (error) => {
      process.stderr.write(
        `caesar: this task's broker (${socketPath}) cannot be reached: ${error.message}. Its conductor may be restarting; try again.\n`,
      );
    });
    socket.on("close", () => {
      if (forwardStdin) process.stdin.destroy();
      resolve(exitCode ?? 1);
    });
  });
}
