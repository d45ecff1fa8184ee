import { type Command, Option } from "commander";
import { CaesarError, UsageError } from "../../support/errors.js";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";
import { collect, readFlags, switchFlag, textFlag, withFlags } from "../flags.js";
import { layerOptions } from "../layer-options.js";

/** `caesar agents test`'s flags. */
const TEST_FLAGS = {
  yes: switchFlag("--yes", "confirm: run it"),
  timeout: textFlag("--timeout <duration>", "time allowed", { fallback: "3m" }),
};

export const agentsCommand: CommandDefinition = {
  name: "agents",
  group: "configure",
  define(program: Command) {
    const agents = program
      .command("agents")
      .description("the agents caesar knows: list, enable, disable, add, remove, test")
      .helpCommand(false);

    withCommonOptions(
      agents
        .command("list")
        .description("every agent: installed, enabled, allowed, risk profile, model — with provenance"),
    ).action(
      handle(async (ctx) => {
        const { identifyCaller } = await import("../../engine/lifecycle/caller.js");
        const { loadCallerConfig } = await import("../../engine/lifecycle/plan.js");
        const { parentOf } = await import("../../engine/lifecycle/parent.js");
        const { listAdapters } = await import("../../agents/registry.js");
        const { summarizeAgents } = await import("../agent-summary.js");
        const { formatColumns } = await import("../../ui/columns.js");
        // Inside a task, the roster is what that task may reach under the delegation rules.
        const caller = await identifyCaller(ctx.root, { cwd: ctx.cwd, action: "agents list" });
        const config = await loadCallerConfig(ctx.root, caller);
        const asking = caller.kind === "task" ? parentOf(caller, config).caller : undefined;
        const reports = await summarizeAgents(config, listAdapters(config, ctx.root), asking);
        ctx.out.result(reports, () =>
          [
            ...(asking
              ? [
                  `From inside task ${asking.id} (${asking.agent}, depth ${asking.depth}): ALLOWED is what it may delegate to.`,
                ]
              : []),
            formatColumns(
              ["ID", "KIND", "INSTALLED", "ENABLED", "ALLOWED", "RISK PROFILE", "MODEL"],
              reports.map((r) => [
                r.id,
                r.kind,
                r.detection.installed ? `yes${r.detection.version ? ` ${r.detection.version}` : ""}` : "no",
                `${r.enabled.value ? "yes" : "no"} (${r.enabled.source})`,
                r.reach.allowed
                  ? `yes${r.reach.delegation ? ` (${r.reach.delegation.mode} ${r.reach.delegation.kind})` : ""}`
                  : asking
                    ? `no: ${r.reach.reason}`
                    : "no",
                `${r.risk_profile.value} (${r.risk_profile.source})`,
                r.model ? `${r.model.value} (${r.model.source})` : "-",
              ]),
            ),
          ].join("\n"),
        );
      }),
    );

    for (const verb of ["enable", "disable"] as const) {
      layerOptions(
        withCommonOptions(
          agents
            .command(verb)
            .description(`${verb} an agent ([agents.<id>] enabled)`)
            .argument("<id>", "agent id"),
        ),
      ).action(
        handle(async (ctx, id) => {
          const { loadConfig } = await import("../../config/effective.js");
          const { findAdapter } = await import("../../agents/registry.js");
          const { setAgentEnabled } = await import("../../config/edits.js");
          const { layerFromFlags } = await import("../../config/write.js");
          findAdapter(await loadConfig(ctx.root), ctx.root, String(id)); // unknown ids are refused, with a suggestion
          const edit = await setAgentEnabled(
            ctx.root,
            layerFromFlags(ctx.options),
            String(id),
            verb === "enable",
          );
          ctx.out.result(
            { agent: id, enabled: verb === "enable", ...edit },
            `${id} ${verb}d in ${edit.path}.`,
          );
        }),
      );
    }

    layerOptions(
      withCommonOptions(
        agents
          .command("add")
          .description(
            "declare your own agent ([[agent]]): any program that reads $CAESAR_TASK_FILE and writes $CAESAR_REPORT_PATH",
          )
          .argument("<id>", "its id (lower-case letters, digits, - and _)")
          .requiredOption("--bin <path>", "the program (on PATH, absolute, or ./relative to the project)")
          .addOption(
            new Option(
              "--protocol <protocol>",
              "oacp: it reads its brief and writes its report (files, output); acp: the Agent Client Protocol on stdio",
            )
              .choices(["oacp", "acp"])
              .default("oacp"),
          )
          .option(
            "--arg <arg>",
            'an argument (repeatable; tokens {{prompt}} {{workspace}} {{taskDir}} {{reportPath}} {{model}}; default "{{prompt}}", none for acp)',
            collect,
            [],
          )
          .addOption(
            new Option("--cwd-mode <mode>", "process: run in the workspace; flag: a token carries it")
              .choices(["process", "flag"])
              .default("process"),
          )
          .option("--display-name <name>", "a name for people")
          .option("--env <KEY=VALUE>", "an environment variable for it (repeatable)", collect, []),
      ),
    ).action(
      handle(async (ctx, id) => {
        const { CustomAgentSchema } = await import("../../config/schema.js");
        const { makeCustomAdapter } = await import("../../agents/custom.js");
        const { addCustomAgent } = await import("../../config/edits.js");
        const { layerFromFlags } = await import("../../config/write.js");
        const o = ctx.options;
        const env: Record<string, string> = {};
        for (const pair of o.env as string[]) {
          const at = pair.indexOf("=");
          if (at <= 0) throw new UsageError("invalid_env", `--env ${pair}: expected KEY=VALUE.`);
          env[pair.slice(0, at)] = pair.slice(at + 1);
        }
        const acp = o.protocol === "acp";
        const parsed = CustomAgentSchema.safeParse({
          id,
          bin: o.bin,
          protocol: o.protocol,
          args: (o.arg as string[]).length > 0 ? o.arg : acp ? [] : ["{{prompt}}"],
          cwd_mode: o.cwdMode,
          ...(o.displayName ? { display_name: o.displayName } : {}),
          ...(Object.keys(env).length > 0 ? { env } : {}),
        });
        if (!parsed.success) {
          throw new UsageError("invalid_agent", `Cannot add agent "${id}".`, {
            detail: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("\n"),
          });
        }
        // Refuses what the adapter would refuse at run time (unknown tokens, a missing or misplaced prompt).
        makeCustomAdapter(parsed.data, ctx.root);
        const edit = await addCustomAgent(ctx.root, layerFromFlags(ctx.options), parsed.data);
        ctx.out.result(
          { agent: parsed.data, ...edit },
          `Agent ${id} declared in ${edit.path}. Try it: caesar agents test ${id} --yes`,
        );
      }),
    );

    layerOptions(
      withCommonOptions(
        agents
          .command("remove")
          .description("remove an [[agent]] declaration from a layer")
          .argument("<id>", "agent id"),
      ),
    ).action(
      handle(async (ctx, id) => {
        const { removeFromLayer } = await import("../../config/edits.js");
        const { layerFromFlags } = await import("../../config/write.js");
        const { loadConfig } = await import("../../config/effective.js");
        const layer = layerFromFlags(ctx.options);
        const edit = await removeFromLayer(ctx.root, layer, "agent", "id", String(id));
        if (!edit.found) {
          const declared = (await loadConfig(ctx.root)).agents[String(id)];
          throw new CaesarError("not_declared", `The ${layer} layer does not declare agent "${id}".`, {
            detail: declared
              ? `It is declared in the ${declared.source} layer: pass --${declared.source === "project" ? "root <dir>" : declared.source}.`
              : "It is not a custom agent; built-in agents can be disabled (caesar agents disable <id>).",
          });
        }
        ctx.out.result({ agent: id, ...edit }, `Agent ${id} removed from ${edit.path}.`);
      }),
    );

    withCommonOptions(
      withFlags(
        agents
          .command("test")
          .description("run a real read-only micro-task with an agent (it may spend tokens: needs --yes)")
          .argument("<id>", "agent id"),
        TEST_FLAGS,
      ),
    ).action(
      handle(async (ctx, id) => {
        const flags = readFlags(TEST_FLAGS, ctx.options);
        if (!flags.yes) {
          throw new UsageError(
            "confirmation_needed",
            `caesar agents test ${id} runs a real task with ${id}: it may spend tokens.`,
            {
              detail: `Re-run with --yes: caesar agents test ${id} --yes`,
            },
          );
        }
        const { resolvePlan } = await import("../../engine/lifecycle/plan.js");
        const { parseDelegationRequest } = await import("../../engine/lifecycle/request.js");
        const { startTask } = await import("../../engine/lifecycle/start.js");
        const { followTask } = await import("../../engine/follow/follow.js");
        const request = parseDelegationRequest(
          {
            objective:
              "This is a connectivity test from caesar. Do not modify any file. Write a short report whose summary names your model, then stop.",
            agent: String(id),
            mode: "read-only",
            timeout: flags.timeout,
            requested_by: "agents test",
            // It tests the agent installed on this machine.
            on: "local",
          },
          { spell: (path) => (path[0] === "agent" ? "<id>" : `--${String(path[0])}`) },
        );
        const { plan } = await resolvePlan(request, { root: ctx.root });
        const record = await startTask(plan);
        ctx.out.notice(`${record.id}: testing ${id} (read-only)…`);
        const final = await followTask(record.id, record.dir, {});
        const ok = final.outcome === "succeeded" && final.report?.status === "success";
        ctx.out.result(
          { agent: id, ok, task_id: record.id, outcome: final.outcome, report: final.report },
          () =>
            [
              `${id}: ${ok ? "works" : "does not work"} — process ${final.outcome}, report ${final.report?.status ?? "none"} (from ${final.report?.report_source ?? "?"}).`,
              final.report ? `summary: ${final.report.summary}` : "",
              ...(final.report?.findings ?? []).map((f) => `finding [${f.severity}] ${f.title}`),
              `details: caesar status ${record.id}`,
            ]
              .filter(Boolean)
              .join("\n"),
        );
        return ok ? 0 : 1;
      }),
    );
    return agents;
  },
};
