import { messageOf } from "../../support/errors.js";
import type {
  AgentCapabilities,
  CommandLine,
  Detection,
  LaunchContext,
  SandboxState,
  SessionAgentAdapter,
} from "../adapter.js";
import { displayCommand } from "../display.js";
import { type SandboxHome, withSandboxHome } from "../sandbox-home.js";
import type { AcpClientOptions } from "./client-session.js";
import { lazyDriver } from "./lazy-driver.js";

/** What differs between ACP agents: how to start one, and what caesar serves it. */
export interface AcpAgentSpec extends AcpClientOptions {
  id: string;
  displayName: string;
  kind: "builtin" | "custom";
  product: string;
  capabilities: AgentCapabilities;
  bin: string;
  /** Arguments and the rest for this launch; never the brief (it goes in `session/prompt`). */
  command(launch: LaunchContext): Omit<CommandLine, "bin" | "cwd" | "display">;
  /** Under caesar's OS sandbox, the CLI's home of the task's (its CLI mode's: sandbox-home.ts). */
  sandboxHome?(launch: LaunchContext): SandboxHome;
  /** What `caesar doctor` says of it under the sandbox (its CLI mode's declaration). */
  sandbox?: SandboxState | undefined;
  detect(env?: NodeJS.ProcessEnv): Promise<Detection>;
}

/** What every ACP adapter says about the capabilities ACP itself gives, whatever the agent. */
export const ACP_MCP: AgentCapabilities["mcp"] = {
  value: true,
  why: "the return channel is a stdio server in session/new's mcpServers (every ACP agent supports stdio)",
};
export const ACP_NATIVE_SCHEMA: AgentCapabilities["nativeSchema"] = {
  value: false,
  why: "ACP has no structured final answer: the report comes from the channel, report.json or the last message",
};
export const ACP_RESUME: AgentCapabilities["resume"] = {
  value: false,
  why: "session/load exists in ACP; caesar does not resume sessions yet",
};

/**
 * An agent driven over the Agent Client Protocol: the process starts in the workspace with the spec's
 * arguments, then caesar drives the session over its stdin and stdout (see AcpClientSession, loaded when
 * the agent starts: lazy-driver.ts).
 */
export function makeAcpAdapter(spec: AcpAgentSpec): SessionAgentAdapter {
  return {
    id: spec.id,
    displayName: spec.displayName,
    kind: spec.kind,
    product: spec.product,
    protocol: "acp",
    capabilities: spec.capabilities,
    images: {
      value: true,
      why: "image blocks in session/prompt, when the agent's initialize says it takes them (else a finding)",
    },
    extraMcpServers:
      spec.channelInSession === false
        ? {
            value: false,
            why: "it does not start the MCP servers given in session/new (the return channel goes on its command line)",
          }
        : { value: true, why: "more servers in session/new's mcpServers, beside the return channel" },
    ...(spec.sandbox ? { sandbox: spec.sandbox } : {}),
    detect: (env) => spec.detect(env),
    buildCommand(launch: LaunchContext): CommandLine {
      const built = spec.command(launch);
      const args = [...built.args, ...launch.extraArgs];
      const command: CommandLine = {
        ...built,
        bin: spec.bin,
        args,
        cwd: launch.task.workspace,
        display: displayCommand(spec.bin, args),
      };
      // Everything of the user's is read-only in the sandbox: the CLI's state goes to a home of the task's.
      return launch.sandboxed && spec.sandboxHome
        ? withSandboxHome(command, spec.sandboxHome(launch))
        : command;
    },
    drive: (launch, host) =>
      lazyDriver(
        async () => {
          const { AcpClientSession } = await import("./client-session.js");
          return new AcpClientSession(launch, host, {
            fs: spec.fs,
            modelByConfigOption: spec.modelByConfigOption,
            ...(spec.session ? { session: spec.session } : {}),
            ...(spec.channelInSession === false ? { channelInSession: false } : {}),
          });
        },
        (error) => {
          host.note(`caesar could not load its ACP client: ${messageOf(error)}`);
          host.done();
        },
      ),
  };
}
