/**
 * `caesar chat`'s own entry point (bundled into dist/cli/chat.cjs, which bin/caesar.js loads for
 * `caesar chat …`): the chat command alone, in one CommonJS file. Agents call
 * `caesar chat` once per post, read or claim, so its start-up is on their path every time, and each
 * of these was measured there (bench/chat): loading every command's code and zod; ES modules
 * (linking them costs Node more than one CommonJS file); a piped stdout's Node stream and `node:tty` (descriptor-stdio.ts, chat-input.ts); commander
 * loading `node:child_process` for executable subcommands caesar never declares (made lazy by the
 * build for this bundle); and defining every subcommand's options when the command line names one.
 * Behaviour is the full CLI's: same program, same command definitions.
 */
import { CHAT_SUBCOMMANDS, chatCommand, defineChatCommand } from "./commands/chat.js";
import { useDescriptorStdio } from "./descriptor-stdio.js";
import { main } from "./program.js";

useDescriptorStdio();
const named = process.argv[3];
// Help and unknown subcommands (commander suggests the closest) need them all.
const only =
  named !== undefined &&
  CHAT_SUBCOMMANDS.includes(named) &&
  !process.argv.some((arg) => arg === "--help" || arg === "-h")
    ? named
    : undefined;
void main(process.argv, [{ ...chatCommand, define: (program) => defineChatCommand(program, only) }]).then(
  (code) => {
    process.exitCode = code;
  },
);
