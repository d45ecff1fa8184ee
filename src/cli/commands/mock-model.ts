import { type Command, Option } from "commander";
import { UsageError } from "../../support/errors.js";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";

function parsePort(raw: string): number {
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError("invalid_port", `--port must be a port number (0–65535), got ${raw}`);
  }
  return port;
}

export const mockModelCommand: CommandDefinition = {
  name: "mock-model",
  group: "integrate",
  define(program: Command) {
    return withCommonOptions(
      program
        .command("mock-model")
        .description(
          "a scripted model server on 127.0.0.1 (OpenAI Responses and Chat Completions, Anthropic Messages, Gemini): test agents, setups and CI without spending tokens",
        )
        .option("--scenario <name|file>", "a built-in scenario (see --list) or a JSON/YAML file", "hello")
        .addOption(new Option("--port <n>", "port to listen on (0: any free port)").argParser(parsePort))
        .option(
          "--print-env <agent>",
          "print the variables that point an agent CLI at the server (codex, claude, opencode, gemini, copilot, all) and prepare its files",
        )
        .option(
          "--state-dir <dir>",
          "where --print-env prepares CLI homes (default: ~/.cache/caesar/mock-model/<port>)",
        )
        .option("--log <file>", "append one JSON line per request (tools offered, step played, answer)")
        .option("--log-bodies", "with --log: include request bodies")
        .option("--list", "list the built-in scenarios")
        .option("--verbose", "one line per request on stderr"),
    ).action(
      handle(async (ctx) => {
        const options = ctx.options as {
          scenario: string;
          port?: number;
          printEnv?: string;
          stateDir?: string;
          log?: string;
          logBodies?: boolean;
          list?: boolean;
          verbose?: boolean;
        };
        const scenarios = await import("../../mock-model/scenario.js");
        const agentEnv = await import("../../mock-model/agent-env.js");
        const port = options.port ?? agentEnv.DEFAULT_MOCK_PORT;

        if (options.list) {
          const list = Object.values(scenarios.BUILTIN_SCENARIOS).map((s) => ({
            name: s.name,
            description: s.description ?? "",
          }));
          ctx.out.result(list, () => list.map((s) => `${s.name.padEnd(12)} ${s.description}`).join("\n"));
          return;
        }

        if (options.printEnv) {
          if (port === 0) {
            throw new UsageError("port_required", "--print-env needs the server's --port (not 0)", {
              detail:
                "Start the server with a fixed port, e.g. `caesar mock-model --port 18080`, and use the same here.",
            });
          }
          const url = `http://127.0.0.1:${port}`;
          const stateDir = options.stateDir ?? agentEnv.defaultStateDir(port);
          const setup =
            options.printEnv === "all"
              ? agentEnv.mockSetupForAll(url, stateDir)
              : agentEnv.mockSetupFor(options.printEnv, url, stateDir);
          await agentEnv.writeSetupFiles(setup);
          ctx.out.result(
            { url, env: setup.env, files: setup.files.map((f) => f.path) },
            () =>
              `# caesar mock-model at ${url} (start it with: caesar mock-model --port ${port})\n${agentEnv.renderExports(setup.env)}`,
          );
          return;
        }

        const scenario = await scenarios.loadScenario(options.scenario);
        const { startMockModel } = await import("../../mock-model/server.js");
        const server = await startMockModel({
          scenario,
          port,
          logFile: options.log,
          logBodies: options.logBodies === true,
          onRequest: options.verbose
            ? (entry) =>
                process.stderr.write(
                  `${entry.method} ${entry.url} → ${entry.status}${entry.decision ? ` ${entry.decision.split("\n")[0]}` : ""}\n`,
                )
            : undefined,
        });
        ctx.out.result(
          { url: server.url, port: server.port, scenario: scenario.name },
          () => `caesar mock-model listening on ${server.url} (scenario ${scenario.name}); Ctrl-C to stop`,
        );
        await new Promise<void>((resolve) => {
          const stop = () => {
            process.off("SIGINT", stop);
            process.off("SIGTERM", stop);
            void server.close().then(resolve);
          };
          process.on("SIGINT", stop);
          process.on("SIGTERM", stop);
        });
      }),
    );
  },
};
