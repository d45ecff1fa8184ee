import { startGovernedRace } from "../../cluster/start.js";
import { identifyCaller } from "../../engine/lifecycle/caller.js";
import type { DelegationRequest } from "../../engine/lifecycle/request.js";
import type { RaceDecision } from "../../engine/race/decide.js";
import { lookAtRace, type RaceLook } from "../../engine/race/race.js";
import { waitForChange } from "../../engine/store/change-watch.js";
import { taskDirOf } from "../../engine/store/task-store.js";
import { paintStatus, type Theme, themeFor } from "../../ui/theme.js";
import type { CommandContext } from "../command.js";
import { warnIfUnsandboxed } from "./run-task.js";

/** `caesar race`: admit every contender (all or none), start the race, follow it to its decision. */
export async function raceFromCli(
  ctx: CommandContext,
  race: {
    objective: string;
    agents: string[];
    /** Each contender's request, parsed (see commands/race.ts). */
    requestFor: (agent: string) => DelegationRequest;
    best: boolean;
    detach: boolean;
  },
): Promise<number> {
  const action = `caesar race of ${race.agents.join(", ")}`;
  const caller = await identifyCaller(ctx.root, { cwd: ctx.cwd, action });
  const started = await startGovernedRace({
    context: { root: ctx.root, cwd: ctx.cwd },
    caller,
    action,
    objective: race.objective,
    agents: race.agents,
    mode: race.best ? "best" : "first",
    requestFor: race.requestFor,
  });
  started.records.forEach((record, index) => {
    const plan = started.plans[index];
    if (plan) warnIfUnsandboxed(record.id, plan);
  });
  if (race.detach) {
    const { id, members } = started.race;
    ctx.out.result({ race_id: id, task_ids: members }, () =>
      [`${id} started: ${members.join(", ")}.`, `  follow: caesar race --show ${id}`].join("\n"),
    );
    return 0;
  }
  return followRace(ctx, started.race.id);
}

/** `caesar race --show <id>`: follow an earlier race to its decision. */
export function showRace(ctx: CommandContext, id: string): Promise<number> {
  return followRace(ctx, id);
}

/**
 * Follow a race until every contender has finished (a `first` race ends soon after its winner: the
 * winner's conductor cancels the others), a line per contender as it ends, then the decision. The first
 * Ctrl-C detaches: the race goes on and its contenders settle it.
 */
async function followRace(ctx: CommandContext, id: string): Promise<number> {
  const theme = themeFor(process.stdout);
  const detach = new AbortController();
  const onInterrupt = () => detach.abort();
  process.once("SIGINT", onInterrupt);
  try {
    let look = await lookAtRace(ctx.root, id);
    const shown = new Set<string>();
    ctx.out.line(header(look, theme));
    for (;;) {
      for (const row of look.comparison) {
        if (row.phase !== "finished" || shown.has(row.task_id)) continue;
        shown.add(row.task_id);
        const entry = look.decision.ranking.find((ranked) => ranked.task_id === row.task_id);
        ctx.out.line(
          `  ${paintStatus(theme, row.outcome === "succeeded" ? (row.status ?? "failed") : (row.outcome ?? "failed"))}  ${row.task_id}  ${row.agent}  ${theme.paint("muted", entry?.why ?? "")}`,
        );
      }
      const pending = look.comparison.filter((row) => row.phase !== "finished");
      if (pending.length === 0 || detach.signal.aborted) break;
      await waitForChange(taskDirOf(ctx.root, pending[0]!.task_id), 1000);
      look = await lookAtRace(ctx.root, id);
    }
    if (detach.signal.aborted && look.decision.state === "pending") {
      process.stderr.write(`\nDetached from ${id}; it goes on.\n  follow: caesar race --show ${id}\n`);
    }
    ctx.out.result(
      {
        race_id: id,
        task_ids: look.race.members,
        decision: look.decision,
        cancelled: look.cancelled,
        comparison: look.comparison,
      },
      () => renderDecision(look.decision, theme),
    );
    return look.decision.state === "decided" ? 0 : 1;
  } finally {
    process.off("SIGINT", onInterrupt);
  }
}

function header(look: RaceLook, theme: Theme): string {
  const { race } = look;
  const how = race.mode === "first" ? "the first to pass its checks wins" : "the best ranked wins";
  const checks = race.checks.length > 0 ? `checks: ${race.checks.join(" · ")}` : "no checks";
  return [
    `${theme.paint("strong", "race")}     ${race.id} ${theme.marks.sep} ${race.members.length} contenders ${theme.marks.sep} ${how}`,
    `         ${theme.paint("muted", checks)}`,
    ...look.comparison.map((row) => `         ${row.task_id}  ${row.agent}`),
  ].join("\n");
}

function renderDecision(decision: RaceDecision, theme: Theme): string {
  const label = (text: string) => theme.paint("muted", text.padEnd(9));
  const lines = [""];
  if (decision.winner)
    lines.push(`${label("winner")}${theme.paint("ok", theme.marks.ok)} ${decision.reason}`);
  else lines.push(`${label(decision.state === "pending" ? "pending" : "no winner")}${decision.reason}`);
  for (const entry of decision.ranking) {
    lines.push(
      `${label(entry.rank === 1 ? "ranking" : "")}${entry.rank} ${entry.task_id}  ${entry.agent}  ${theme.paint("muted", entry.why)}`,
    );
  }
  if (decision.winner) {
    lines.push(
      `${label("next")}${theme.paint("strong", `caesar diff ${decision.winner}   caesar apply ${decision.winner}`)}`,
    );
  }
  return lines.join("\n");
}
