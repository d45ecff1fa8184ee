import type { Command } from "commander";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";

export const doctorCommand: CommandDefinition = {
  name: "doctor",
  group: "start",
  define(program: Command) {
    return withCommonOptions(
      program
        .command("doctor")
        .description(
          "what caesar can use here: git, the configuration, each agent (installed, version, capabilities, allowed)",
        ),
    ).action(
      handle(async (ctx) => {
        const { loadConfig } = await import("../../config/effective.js");
        const { listAdapters } = await import("../../agents/registry.js");
        const { modelHosts } = await import("../../agents/model-hosts.js");
        const { keyDoorSpecs } = await import("../../agents/key-masks.js");
        const { findExecutable } = await import("../../support/executable-path.js");
        const { summarizeAgents } = await import("../agent-summary.js");
        const { describeRepository } = await import("../../workspace/git.js");
        const { renderDoctor } = await import("../doctor-render.js");
        const repository = await describeRepository(ctx.root).catch((error: Error) => ({
          kind: "error" as const,
          message: error.message,
        }));
        const config = await loadConfig(ctx.root);
        const agents = await summarizeAgents(config, listAdapters(config, ctx.root));
        const { readServiceStatus } = await import("../service-line.js");
        const { platformSandbox } = await import("../../sandbox/decide.js");
        const { MachineProxies } = await import("../../sandbox/upstream-proxy.js");
        const platform = platformSandbox();
        const { planTrace } = await import("../../engine/lifecycle/trace-plan.js");
        const traced = planTrace(config, process.env, undefined);
        const result = {
          root: ctx.root,
          node: process.version,
          repository,
          files: config.files,
          service: await readServiceStatus(ctx.root),
          sandbox: {
            mode: config.sandbox.mode.value,
            mode_from: config.sandbox.mode.source,
            backend: platform.backend,
            detail: platform.detail,
            allow_hosts: config.sandbox.allow_hosts.value,
            allow_hosts_from: config.sandbox.allow_hosts.source,
            mask_keys: config.sandbox.mask_keys.value,
            relay: findExecutable("socat") ?? null,
            // The machine's proxy the egress proxy chains, as this environment names it (the conductor
            // service reads its own, the environment of the command that started it): variable, host and
            // port only, never its user and password.
            upstream_proxy: MachineProxies.fromEnvironment(process.env).describe(),
          },
          telemetry: { settings: traced.telemetry, problem: traced.findings[0]?.detail ?? null },
          agents: agents.map((agent) => ({
            ...agent,
            model_hosts: modelHosts(agent.product, process.env),
            // The keys of this environment a sandboxed run of it would mask (agents/key-masks.ts).
            masked_keys: keyDoorSpecs(agent.product, process.env).flatMap((door) => door.keys),
          })),
        };
        ctx.out.result(result, () => renderDoctor(result));
      }),
    );
  },
};
