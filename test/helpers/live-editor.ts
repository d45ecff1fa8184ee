import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { describe } from "vitest";
import { mockSetupFor, writeSetupFiles } from "../../src/mock-model/agent-env.js";
import type { Scenario } from "../../src/mock-model/scenario.js";
import { type RequestLogEntry, startMockModel } from "../../src/mock-model/server.js";
import { type EditorOptions, startEditor } from "./acp-editor.js";
import { agentStateFor } from "./agent-state.js";
import { AGENT_BIN_DIR, agentBinAvailable, isolatedHome } from "./live-agent.js";
import { makeRepo, tempDir } from "./repo.js";
import { pinnedAgentCli, standInForMissing } from "./system-deps.js";

/** Generous: two shared cores, and the ACP CLIs take up to a minute to start under load. */
export const LIVE_EDITOR_TIMEOUT_MS = 300_000;

/** The executable of each real ACP delegate the editor tests drive. */
const EXECUTABLES: Record<string, string> = { "gemini-acp": "gemini", "opencode-acp": "opencode" };

/**
 * A suite that runs only when the pinned CLI of `id` is installed (test/agent-clis); else a stand-in that
 * says what is missing.
 */
export function describeLiveEditor(id: string, title: string, body: () => void): void {
  const cli = EXECUTABLES[id]!;
  if (!agentBinAvailable(cli)) {
    describe(title, () => standInForMissing(pinnedAgentCli(cli)));
    return;
  }
  describe(title, body);
}

/**
 * An editor's session with a real ACP delegate: a fresh repository, `caesar mock-model` playing
 * `scenario`, the CLI set up against it in a home of its own, and `caesar acp --agent <id>` driven by the
 * SDK's client as an editor would. `open` initializes and creates the session.
 */
export async function startLiveEditor(
  id: string,
  scenario: Scenario,
  options: Partial<EditorOptions> & { files?: Record<string, string> } = {},
) {
  const root = makeRepo(options.files);
  const state = tempDir(`caesar-live-editor-${id}-`);
  const home = join(state, "home");
  mkdirSync(home, { recursive: true });
  const requests: RequestLogEntry[] = [];
  const server = await startMockModel({ scenario, logBodies: true, onRequest: (e) => requests.push(e) });
  const setup = mockSetupFor(id, server.url, agentStateFor(state));
  await writeSetupFiles(setup);
  const editor = startEditor({
    ...options,
    cwd: root,
    args: ["--agent", id, ...(options.args ?? [])],
    env: {
      PATH: [AGENT_BIN_DIR, process.env.PATH ?? "/usr/bin:/bin"].join(":"),
      ...isolatedHome(home),
      ...setup.env,
      ...options.env,
    },
  });
  return {
    root,
    state,
    editor,
    requests,
    async open(init: Partial<acp.InitializeRequest> = {}, mcpServers: acp.McpServer[] = []) {
      const initialized = await editor.agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
        ...init,
      });
      const session = await editor.agent.request(acp.methods.agent.session.new, { cwd: root, mcpServers });
      return { initialized, session };
    },
    prompt(sessionId: string, prompt: acp.ContentBlock[]) {
      return editor.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt });
    },
    async close() {
      editor.close();
      await editor.exited;
      await server.close();
      if (process.env.CAESAR_KEEP_LIVE !== "1")
        for (const dir of [root, state]) rmSync(dir, { recursive: true, force: true });
    },
  };
}
