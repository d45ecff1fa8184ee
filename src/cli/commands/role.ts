import type { Command } from "commander";
import { CaesarError } from "../../support/errors.js";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";
import { ISOLATION, MODE, MODEL, NETWORK, TIMEOUT } from "../delegation-flags.js";
import { readFlags, textFlag, withFlags } from "../flags.js";
import { layerOptions } from "../layer-options.js";

/** `caesar role add`'s flags: the role's fields; those a request has too are the request's flags. */
const ROLE_FLAGS = {
  purpose: textFlag("--purpose <text>", "What it is for."),
  agents: textFlag("--agents <ids>", "Agents in fallback order, comma-separated."),
  mode: MODE,
  isolation: ISOLATION,
  network: NETWORK,
  timeout: TIMEOUT,
  model: MODEL,
  systemPromptFile: textFlag("--system-prompt-file <path>", "A prompt file, relative to the project root."),
};

export const roleCommand: CommandDefinition = {
  name: "role",
  group: "configure",
  define(program: Command) {
    const role = program
      .command("role")
      .description("roles: a purpose, agents in fallback order, and defaults")
      .helpCommand(false);

    withCommonOptions(role.command("list").description("every role, and the agent it would pick now")).action(
      handle(async (ctx) => {
        const { loadConfig, roleValues } = await import("../../config/effective.js");
        const { formatColumns } = await import("../../ui/columns.js");
        const config = await loadConfig(ctx.root);
        const roles = Object.values(config.roles).map(roleValues);
        ctx.out.result(roles, () =>
          formatColumns(
            ["ROLE", "MODE", "AGENTS", "PURPOSE"],
            roles.map((r) => [r.name, r.mode ?? "(policy)", (r.agents ?? []).join(","), r.purpose ?? ""]),
          ),
        );
      }),
    );

    withCommonOptions(
      role
        .command("show")
        .description("one role, each field with the layer it comes from")
        .argument("<name>", "role name"),
    ).action(
      handle(async (ctx, name) => {
        const { loadConfig } = await import("../../config/effective.js");
        const { findRole, pickRoleAgent } = await import("../../policy/roles.js");
        const { listAdapters } = await import("../../agents/registry.js");
        const config = await loadConfig(ctx.root);
        const values = findRole(config, String(name));
        const effective = config.roles[values.name]!;
        const picked = await pickRoleAgent(config, values, listAdapters(config, ctx.root)).then(
          (adapter) => adapter.id,
          (error: Error) => `none — ${error.message}`,
        );
        const fields = Object.entries(effective).filter(([key]) => key !== "name") as [
          string,
          { value: unknown; source: string },
        ][];
        ctx.out.result({ name: values.name, fields: Object.fromEntries(fields), picks: picked }, () =>
          [
            `role ${values.name}`,
            ...fields.map(
              ([key, sourced]) =>
                `  ${key.padEnd(20)}${sourced.value === undefined ? "-" : JSON.stringify(sourced.value)}  (${sourced.source})`,
            ),
            `  would run:           ${picked}`,
          ].join("\n"),
        );
      }),
    );

    layerOptions(
      withCommonOptions(
        withFlags(
          role
            .command("add")
            .description("add a role, or change fields of one (only the fields given are written)")
            .argument("<name>", "role name"),
          ROLE_FLAGS,
        ),
      ),
    ).action(
      handle(async (ctx, name) => {
        const { RoleSchema } = await import("../../config/schema.js");
        const { upsertRole } = await import("../../config/edits.js");
        const { layerFromFlags } = await import("../../config/write.js");
        const { parseDuration } = await import("../../support/duration.js");
        const { UsageError } = await import("../../support/errors.js");
        const o = readFlags(ROLE_FLAGS, ctx.options);
        if (o.timeout) parseDuration(o.timeout, "--timeout");
        const parsed = RoleSchema.safeParse({
          name,
          purpose: o.purpose,
          agents: o.agents
            ?.split(",")
            .map((a) => a.trim())
            .filter(Boolean),
          mode: o.mode,
          isolation: o.isolation,
          network: o.network,
          timeout: o.timeout,
          model: o.model,
          system_prompt_file: o.systemPromptFile,
        });
        if (!parsed.success) {
          throw new UsageError("invalid_role", `Cannot add role "${name}".`, {
            detail: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("\n"),
          });
        }
        const edit = await upsertRole(ctx.root, layerFromFlags(ctx.options), parsed.data);
        ctx.out.result(
          { role: parsed.data, ...edit },
          edit.changed ? `Role ${name} written to ${edit.path}.` : `Role ${name}: nothing to change.`,
        );
      }),
    );

    layerOptions(
      withCommonOptions(
        role
          .command("remove")
          .description("remove a role's declaration from a layer")
          .argument("<name>", "role name"),
      ),
    ).action(
      handle(async (ctx, name) => {
        const { removeFromLayer } = await import("../../config/edits.js");
        const { layerFromFlags } = await import("../../config/write.js");
        const { DEFAULT_ROLES } = await import("../../config/default-roles.js");
        const layer = layerFromFlags(ctx.options);
        const edit = await removeFromLayer(ctx.root, layer, "role", "name", String(name));
        if (!edit.found) {
          const builtIn = DEFAULT_ROLES.some((r) => r.name === name);
          throw new CaesarError("not_declared", `The ${layer} layer does not declare role "${name}".`, {
            detail: builtIn
              ? `"${name}" is a default role: it can be changed (caesar role add ${name} …) but not removed.`
              : "See where it is declared with `caesar role show <name>`.",
          });
        }
        ctx.out.result({ role: name, ...edit }, `Role ${name} removed from ${edit.path}.`);
      }),
    );
    return role;
  },
};
