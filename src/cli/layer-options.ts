import type { Command } from "commander";
import { refuseInsideTask } from "./config-guard.js";

/** The options of every command that writes configuration (refused from inside a task). */
export function layerOptions(command: Command): Command {
  return refuseInsideTask(
    command
      .option("--global", "write the global layer (~/.config/caesar/config.toml, or $XDG_CONFIG_HOME)")
      .option("--local", "write the local layer (.caesar/config.local.toml, not committed)"),
    `${command.parent?.name() ?? ""} ${command.name()}`.trim(),
  );
}
