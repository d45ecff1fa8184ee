import type { Command } from "commander";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";

export const demoCommand: CommandDefinition = {
  name: "demo",
  group: "start",
  define(program: Command) {
    return withCommonOptions(
      program
        .command("demo")
        .description(
          "the main job on a built-in example: a bundled agent edits a throwaway repository in a worktree, offline",
        ),
    ).action(
      handle(async (ctx) => {
        const { makeDemoRepository, DEMO_OBJECTIVE } = await import("../run/demo-repo.js");
        const { resolvePlan } = await import("../../engine/lifecycle/plan.js");
        const { startTask } = await import("../../engine/lifecycle/start.js");
        const { followAndRender, exitCodeOf } = await import("../run/run-task.js");
        const { taskResult, taskPatch } = await import("../../engine/lifecycle/result.js");
        const repo = makeDemoRepository();
        ctx.out.notice(`Throwaway repository: ${repo}\nObjective: ${DEMO_OBJECTIVE}\n`);
        const { parseDelegationRequest } = await import("../../engine/lifecycle/request.js");
        const request = parseDelegationRequest({
          objective: DEMO_OBJECTIVE,
          agent: "reference",
          requested_by: "demo",
          on: "local",
        });
        const { plan } = await resolvePlan(request, { root: repo });
        const record = await startTask(plan);
        const demoCtx = { ...ctx, root: repo };
        const final = await followAndRender(demoCtx, record);
        if (final.phase === "finished" && !ctx.json) {
          const result = await taskResult(final, repo).catch(() => undefined);
          if (result)
            ctx.out.line(
              `\nThe verified diff (git, against ${final.base_ref?.slice(0, 10)}):\n\n${await taskPatch(result)}`,
            );
          ctx.out.line(
            [
              "Try next (the throwaway repository is kept):",
              `  npx caesar status ${record.id} --root ${repo}   # the task, its report and findings`,
              `  npx caesar apply ${record.id} --root ${repo}    # bring the change into that repository (staged)`,
              `  npx caesar run --root ${repo} --agent reference 'create notes.txt containing "hi"'`,
            ].join("\n"),
          );
        }
        return exitCodeOf(final);
      }),
    );
  },
};
