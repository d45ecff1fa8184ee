import type { Command } from "commander";
import { UsageError } from "../../support/errors.js";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";
import { LEVELS, type Level } from "../conformance/requirements.js";
import { readFlags, switchFlag, textFlag, withFlags } from "../flags.js";

const CONFORMANCE_FLAGS = {
  bin: textFlag("--bin <program>", "check this program (an OACP agent run with the brief as its argument)"),
  level: textFlag("--level <level>", "the level that decides the exit status", {
    choices: LEVELS,
    fallback: "core",
  }),
  timeout: textFlag("--timeout <duration>", "each scenario's deadline (the deadline scenario has its own)", {
    fallback: "2m",
  }),
  keep: switchFlag("--keep", "keep the throwaway repository and its tasks to look into"),
};

export const conformanceCommand: CommandDefinition = {
  name: "conformance",
  group: "integrate",
  define(program: Command) {
    return withCommonOptions(
      withFlags(
        program
          .command("conformance")
          .description(
            "check that an agent speaks OACP: scenario tasks in a throwaway repository, and a scorecard per requirement",
          )
          .argument("[agent]", "an agent id of the configuration (or give --bin)"),
        CONFORMANCE_FLAGS,
      ),
    ).action(
      handle(async (ctx, agent) => {
        const flags = readFlags(CONFORMANCE_FLAGS, ctx.options);
        const level = parseLevel(flags.level);
        const { parseDuration } = await import("../../support/duration.js");
        parseDuration(flags.timeout, "--timeout");
        const { subjectOfAgent, subjectOfProgram } = await import("../conformance/subject.js");
        if ((agent === undefined) === (flags.bin === undefined))
          throw new UsageError("conformance_subject", "caesar conformance checks one agent.", {
            detail:
              "Name an agent of the configuration (caesar conformance my-agent) or a program (caesar conformance --bin ./my-agent.sh), not both.",
          });
        const subject =
          flags.bin !== undefined
            ? await subjectOfProgram(flags.bin, ctx.cwd)
            : await subjectOfAgent(String(agent), ctx.root);
        const { runConformance } = await import("../conformance/kit.js");
        const { renderScorecard } = await import("../conformance/scorecard.js");
        const card = await runConformance(subject, {
          level,
          timeout: flags.timeout,
          keep: flags.keep,
          progress: (line) => ctx.out.notice(line),
        });
        ctx.out.result(card, () => renderScorecard(card));
        return card.passed ? 0 : 1;
      }),
    );
  },
};

function parseLevel(raw: string): Level {
  if ((LEVELS as readonly string[]).includes(raw)) return raw as Level;
  throw new UsageError("invalid_level", `--level ${raw}: expected ${LEVELS.join(" or ")}.`, {
    detail:
      "core: what every OACP agent must do; extended: events, the question channel and a full report too.",
  });
}
