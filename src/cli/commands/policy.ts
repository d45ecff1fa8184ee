import type { Command } from "commander";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";
import { layerOptions } from "../layer-options.js";

export const policyCommand: CommandDefinition = {
  name: "policy",
  group: "configure",
  define(program: Command) {
    const policy = program
      .command("policy")
      .description("who may run what: show the policy, allow or deny an agent")
      .helpCommand(false);
    withCommonOptions(
      policy.command("show").description("every policy value, with the layer it comes from"),
    ).action(
      handle(async (ctx) => {
        const { loadConfig, riskProfileOf } = await import("../../config/effective.js");
        const { formatColumns } = await import("../../ui/columns.js");
        const config = await loadConfig(ctx.root);
        const rows = Object.entries(config.policy).map(([key, sourced]) => [
          key,
          JSON.stringify(sourced.value),
          sourced.source,
        ]);
        const profiles = Object.keys({ default: true, ...config.riskProfiles }).map((name) => {
          const profile = riskProfileOf(config, name);
          return {
            name,
            delegation_policy: profile.delegation_mode,
            max_tasks_per_hour: profile.max_tasks_per_hour,
            max_cost_per_day: profile.max_cost_per_day,
            max_actions_per_hour: profile.max_actions_per_hour,
          };
        });
        ctx.out.result({ policy: config.policy, risk_profiles: profiles, files: config.files }, () =>
          [
            formatColumns(["[policy]", "VALUE", "FROM"], rows),
            "",
            formatColumns(
              ["[risk_profiles]", "DELEGATION", "TASKS/HOUR", "COST/DAY", "TOOL CALLS/HOUR"],
              profiles.map((p) => [
                p.name,
                `${p.delegation_policy.value} (${p.delegation_policy.source})`,
                `${p.max_tasks_per_hour.value ?? "unlimited"} (${p.max_tasks_per_hour.source})`,
                `${p.max_cost_per_day.value ?? "unlimited"} (${p.max_cost_per_day.source})`,
                `${p.max_actions_per_hour.value ?? "unlimited"} (${p.max_actions_per_hour.source})`,
              ]),
            ),
            "",
            ...config.files.map((f) => `${f.layer.padEnd(8)} ${f.path}${f.present ? "" : "  (absent)"}`),
          ].join("\n"),
        );
      }),
    );
    for (const verb of ["allow", "deny"] as const) {
      layerOptions(
        withCommonOptions(
          policy
            .command(verb)
            .description(
              verb === "allow"
                ? "let an agent run (removes it from denied, adds it to a non-empty allowed)"
                : "forbid an agent",
            )
            .argument("<agent>", "agent id"),
        ),
      ).action(
        handle(async (ctx, agent) => {
          const { loadConfig } = await import("../../config/effective.js");
          const { allowAgent, denyAgent } = await import("../../config/edits.js");
          const { layerFromFlags } = await import("../../config/write.js");
          const { admissionOf } = await import("../../policy/admission.js");
          const id = String(agent);
          const layer = layerFromFlags(ctx.options);
          const edit = await (verb === "allow" ? allowAgent : denyAgent)(
            ctx.root,
            layer,
            await loadConfig(ctx.root),
            id,
          );
          const after = await loadConfig(ctx.root);
          const admission = admissionOf(after, id);
          const wanted = verb === "allow";
          // A rule about an agent nobody declared is written (it may be declared later), but never silently.
          const { listAdapters } = await import("../../agents/registry.js");
          const { closestMatch } = await import("../../support/closest.js");
          const known = listAdapters(after, ctx.root).map((adapter) => adapter.id);
          const hint = closestMatch(id, known);
          const warning = known.includes(id)
            ? undefined
            : `"${id}" is not an agent caesar knows${hint ? ` (did you mean "${hint}"?)` : ""}: the rule was written, but applies only once an agent with that id is declared. Known agents: ${known.join(", ")}.`;
          if (warning) process.stderr.write(`caesar: warning: ${warning}\n`);
          ctx.out.result(
            {
              agent: id,
              layer,
              path: edit.path,
              changed: edit.changed,
              allowed: admission.allowed,
              reason: admission.reason,
              known: warning === undefined,
              ...(warning ? { warning } : {}),
            },
            () =>
              [
                edit.changed ? `${edit.path}: updated.` : `${edit.path}: already so, unchanged.`,
                admission.allowed === wanted
                  ? `${id} is now ${wanted ? "allowed" : "denied"}: ${admission.reason}.`
                  : `${id} is still ${admission.allowed ? "allowed" : "not allowed"}: ${admission.reason} — a more specific layer decides.`,
              ].join("\n"),
          );
          return admission.allowed === wanted ? 0 : 1;
        }),
      );
    }
    return policy;
  },
};
