import type { Command } from "commander";
import { UsageError } from "../../support/errors.js";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";
import {
  ACCEPT,
  ATTEMPTS,
  CHECK,
  CHECK_TIMEOUT,
  CONSTRAINT,
  CONTEXT,
  FOLLOW_UP,
  inputFromFlags,
  MODE,
  MODEL,
  NETWORK,
  parseFromFlags,
  TIMEOUT,
} from "../delegation-flags.js";
import { listFlag, readFlags, switchFlag, textFlag, withFlags } from "../flags.js";

/** `caesar race`'s flags: its contenders and how it is won, then the request's (each contender's). */
export const RACE_FLAGS = {
  agent: listFlag("--agent <id>", "A contender (at least two; the same agent may run twice)."),
  best: switchFlag(
    "--best",
    "Let all finish, rank them (checks passed, smaller diff, time), instead of the first to pass.",
  ),
  check: CHECK,
  checkTimeout: CHECK_TIMEOUT,
  attempts: ATTEMPTS,
  followUp: FOLLOW_UP,
  mode: MODE,
  network: NETWORK,
  timeout: TIMEOUT,
  model: MODEL,
  context: CONTEXT,
  constraint: CONSTRAINT,
  accept: ACCEPT,
  detach: switchFlag("--detach", "Start the race and return its id at once (its contenders settle it)."),
  show: textFlag("--show <race-id>", "Follow an earlier race to its decision instead of starting one."),
};

export const raceCommand: CommandDefinition = {
  name: "race",
  group: "delegate",
  define(program: Command) {
    return withCommonOptions(
      withFlags(
        program
          .command("race")
          .description("one objective, several agents in their own worktrees; won on checks")
          .usage('--agent <id> --agent <id> [--check "<command>"]... [--best] <objective>')
          .argument("[objective]", "what every agent should do"),
        RACE_FLAGS,
      ),
    ).action(
      handle(async (ctx, objective) => {
        const flags = readFlags(RACE_FLAGS, ctx.options);
        const { raceFromCli, showRace } = await import("../run/race-task.js");
        if (flags.show !== undefined) {
          if (objective !== undefined) {
            throw new UsageError("race_arguments", "Give either --show <race-id> or an objective, not both.");
          }
          return showRace(ctx, flags.show);
        }
        if (objective === undefined) {
          throw new UsageError("race_arguments", "A race needs an objective and at least two --agent.", {
            detail: 'caesar race --agent codex --agent claude --check "npm test" "Fix the parser"',
          });
        }
        const { RACE_MAX_AGENTS } = await import("../../engine/race/race.js");
        if (flags.agent.length < 2 || flags.agent.length > RACE_MAX_AGENTS) {
          throw new UsageError(
            "race_arguments",
            `A race needs 2 to ${RACE_MAX_AGENTS} --agent (got ${flags.agent.length}).`,
            { detail: 'caesar race --agent codex --agent claude --check "npm test" "Fix the parser"' },
          );
        }
        // Every contender's request is parsed before any is admitted: a bad one is refused as such.
        const input = await inputFromFlags(RACE_FLAGS, ctx.options, {
          objective: String(objective),
          cwd: ctx.cwd,
        });
        const requests = new Map(
          flags.agent.map((agent) => [
            agent,
            parseFromFlags(RACE_FLAGS, { ...input, agent, isolation: "worktree" }),
          ]),
        );
        return raceFromCli(ctx, {
          objective: String(objective),
          agents: flags.agent,
          requestFor: (agent) => requests.get(agent)!,
          best: flags.best,
          detach: flags.detach,
        });
      }),
    );
  },
};
