import { describe, expect, it } from "vitest";
import { ACP_ADAPTERS } from "../../../src/agents/acp/clis.js";
import type { ChannelServer, CommandLine } from "../../../src/agents/adapter.js";
import type { Mode } from "../../../src/protocol/task.js";
import { parseJsonOutput, runCaesar } from "../../helpers/cli.js";
import { scratchLaunch } from "../../helpers/replay.js";
import { makeRepo, tempDir } from "../../helpers/repo.js";

/**
 * One contract for the built-in ACP adapters: the brief never on the command line (it goes in
 * session/prompt), the process in the workspace, the user's extra arguments last, and the capabilities
 * backed by what the command line does.
 */

const PROMPT = "-the brief; 'quotes' and a newline\nend";
const MODEL = "model-marker-7";
const CHANNEL: ChannelServer = {
  name: "caesar",
  command: "/usr/bin/node",
  args: ["/opt/caesar/bin/caesar.js", "return-channel", "serve", "--task-dir", "/tmp/task-dir-marker"],
  env: { CAESAR_CHANNEL_TASK_DIR: "/tmp/task-dir-marker" },
  tools: ["ask_orchestrator"],
};

function everything(command: CommandLine): string {
  return [
    ...command.args,
    ...Object.values(command.env),
    ...(command.files ?? []).map((f) => f.content),
  ].join("\n");
}

describe.each(ACP_ADAPTERS.map((adapter) => [adapter.id, adapter] as const))(
  "ACP adapter contract: %s",
  (_id, adapter) => {
    // One scratch directory per adapter, so command lines differ only by what a test varies.
    const first = scratchLaunch(adapter);
    const base = { workspace: first.task.workspace, taskDir: first.paths.dir };
    const build = (options: { mode?: Mode; network?: boolean; model?: string; channel?: boolean } = {}) => {
      const launch = scratchLaunch(adapter, {
        ...base,
        mode: options.mode ?? "write",
        network: options.network ?? true,
        model: options.model,
        channel: options.channel ? CHANNEL : undefined,
        prompt: PROMPT,
        extraArgs: ["--extra-marker"],
      });
      return { launch, command: adapter.buildCommand(launch) };
    };

    it("is an ACP adapter, verified on a version, with a reason for every capability", () => {
      expect(adapter.protocol).toBe("acp");
      expect(adapter.drive).toBeTypeOf("function");
      expect(adapter.capabilities.verifiedOn).toMatch(/^\d+\.\d+\.\d+$/);
      for (const capability of Object.values(adapter.capabilities)) {
        if (capability && typeof capability === "object" && "why" in capability)
          expect(capability.why.length).toBeGreaterThan(4);
      }
      expect(adapter.capabilities.nativeSchema.value).toBe(false);
    });

    it("never puts the brief on the command line; runs in the workspace; extra arguments last", () => {
      for (const mode of ["read-only", "write"] as Mode[]) {
        const { launch, command } = build({ mode });
        expect(everything(command)).not.toContain("the brief");
        expect(command.cwd).toBe(launch.task.workspace);
        expect(command.args.at(-1)).toBe("--extra-marker");
        expect(command.display).not.toContain("\n");
      }
    });

    it("the model reaches the command line, the environment or the inline config", () => {
      expect(everything(build({ model: MODEL }).command)).toContain(MODEL);
      expect(everything(build().command)).not.toContain(MODEL);
    });

    it("network: the command line changes with it exactly where the capability says", () => {
      for (const mode of ["read-only", "write"] as Mode[]) {
        const on = everything(build({ mode, network: true }).command);
        const off = everything(build({ mode, network: false }).command);
        const controllable =
          adapter.capabilities.network.value === "toggle" ||
          (adapter.capabilities.network.value === "write-only" && mode === "write");
        expect(on !== off, mode).toBe(controllable);
      }
    });

    it("read-only: an OS sandbox on the command line exactly when the capability says os", () => {
      const readOnly = build({ mode: "read-only" }).command;
      expect(readOnly.args.includes('sandbox_mode="read-only"')).toBe(
        adapter.capabilities.readOnly.value === "os",
      );
    });

    it("the return channel: on the command line only for the CLI that ignores session/new's servers", () => {
      const withChannel = everything(build({ channel: true }).command);
      expect(withChannel.includes("/tmp/task-dir-marker")).toBe(adapter.id === "copilot-acp");
    });
  },
);

describe("caesar doctor lists the ACP modes", () => {
  it("with protocol acp, their capabilities, and whether they are installed", async () => {
    const root = makeRepo();
    const home = tempDir();
    const result = await runCaesar(["agents", "list", "--json"], {
      cwd: root,
      env: { HOME: home, XDG_CONFIG_HOME: `${home}/.config`, PATH: "/usr/bin:/bin" },
    });
    const listed = parseJsonOutput<
      { agents?: { id: string; protocol: string }[] } | { id: string; protocol: string }[]
    >(result);
    const agents = Array.isArray(listed) ? listed : (listed.agents ?? []);
    const acp = agents.filter((agent) => agent.protocol === "acp").map((agent) => agent.id);
    expect(acp.sort()).toEqual(["claude-acp", "codex-acp", "copilot-acp", "gemini-acp", "opencode-acp"]);
    const doctor = await runCaesar(["doctor"], {
      cwd: root,
      env: { HOME: home, XDG_CONFIG_HOME: `${home}/.config`, PATH: "/usr/bin:/bin" },
    });
    expect(doctor.stdout).toMatch(/gemini-acp — Gemini CLI \(ACP\) \(builtin, ACP\): not installed/);
  });
});
