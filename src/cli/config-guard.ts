import type { Command } from "commander";
import { findProjectRoot } from "../config/project-root.js";

/**
 * Configuration and agent CLIs' settings are the person's: a command that writes them refuses to run from
 * inside a task (principle 7 — no caesar command the governed can run may widen what it is allowed). The
 * refusal is recorded against the task it comes from.
 */
export function refuseInsideTask(command: Command, what: string): Command {
  return command.hook("preAction", async (_command, action) => {
    const options = action.optsWithGlobals() as { root?: string };
    const root = findProjectRoot(process.cwd(), options.root);
    const { identifyCaller, governed } = await import("../engine/lifecycle/caller.js");
    const { CaesarError } = await import("../support/errors.js");
    const caller = await identifyCaller(root, { action: what });
    if (caller.kind === "person") return;
    await governed(caller, what, async () => {
      throw new CaesarError(
        "configuration_in_task",
        `Refused: \`caesar ${what}\` writes configuration, and task ${caller.id} may not change the rules it runs under.`,
        {
          detail:
            "caesar's configuration (and the agent CLIs' settings it installs into) belongs to the person who runs caesar. Nothing was changed. Ask for the change in your report instead.",
        },
      );
    });
  });
}
