import type { Command } from "commander";

/** The options of every command that writes configuration. */
export function layerOptions(command: Command): Command {
  return command
    .option("--global", "write the global layer (~/.config/caesar/config.toml, or $XDG_CONFIG_HOME)")
    .option("--local", "write the local layer (.caesar/config.local.toml, not committed)");
}
