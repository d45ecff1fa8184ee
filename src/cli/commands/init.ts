import type { Command } from "commander";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";
import { refuseInsideTask } from "../config-guard.js";

export const initCommand: CommandDefinition = {
  name: "init",
  group: "start",
  define(program: Command) {
    return refuseInsideTask(
      withCommonOptions(
        program
          .command("init")
          .description(
            "set up caesar in this project (config, role prompts, .gitignore); re-run to refresh what is derived",
          )
          .option("--global", "create your global configuration instead (~/.config/caesar/config.toml)")
          .option("--force", "rewrite the files caesar writes (the old config is kept as .bak)"),
      ),
      "init",
    ).action(
      handle(async (ctx) => {
        const { initProject, initGlobal } = await import("../../config/init.js");
        const force = ctx.options.force === true;
        const result = ctx.options.global
          ? await initGlobal({ force })
          : await initProject(ctx.root, { force });
        ctx.out.result(result, () =>
          [...result.actions, "", "Next: caesar doctor   # which agents are installed and allowed"].join(
            "\n",
          ),
        );
      }),
    );
  },
};
