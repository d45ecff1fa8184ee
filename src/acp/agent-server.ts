import * as acp from "@agentclientprotocol/sdk";
import { findAdapter } from "../agents/registry.js";
import { loadConfig } from "../config/effective.js";
import { findProjectRoot } from "../config/project-root.js";
import { findRole } from "../policy/roles.js";
import { isCaesarError } from "../support/errors.js";
import { PACKAGE_VERSION } from "../support/package-version.js";
import { randomHex } from "../support/random.js";
import { makeEditorLink } from "./editor-link.js";
import { runPromptTurn } from "./prompt-turn.js";
import {
  DEFAULT_VALUE,
  DELEGATE_OPTION,
  type Delegate,
  isSessionMode,
  MODE_OPTION,
  MODEL_OPTION,
  modelValues,
  parseDelegateValue,
  type SessionMode,
  sessionOptions,
} from "./session-options.js";
import { parseSlashCommand, runSlashCommand, SLASH_COMMANDS } from "./slash-commands.js";

export interface CaesarAgentOptions {
  /** `--root`: the project, whatever directory the editor opens the session in. */
  root?: string;
  /** `--agent` / `--role`: every prompt goes to it; the session offers no other. */
  delegate?: Delegate;
  env: NodeJS.ProcessEnv;
  /** Aborted when the editor goes away: turns stop following their tasks, which keep running. */
  closed: AbortSignal;
}

interface EditorSession {
  id: string;
  root: string;
  delegate: Delegate;
  mode: SessionMode;
  /** The model option's value (`default`: the role's, `[models]`' or the agent's own). */
  model: string;
  /** The prompt turn under way (one at a time, as ACP has it), to cancel. */
  turn?: AbortController;
  previous?: { id: string; summary: string };
  /** The session's tasks, oldest first (the slash commands act on them). */
  tasks: string[];
}

/**
 * caesar as an ACP agent, for editors (Zed, JetBrains, Neovim clients…): each prompt becomes a task
 * delegated to an agent or role, in a worktree of its own, streamed back as session updates, answered by
 * its verified report, and its change offered to apply. A thin front end: the engine does the work.
 */
export function createCaesarAgent(options: CaesarAgentOptions): acp.AgentApp {
  const sessions = new Map<string, EditorSession>();
  let clientCapabilities: acp.ClientCapabilities = {};
  const fixed = options.delegate !== undefined;

  const session = (id: string): EditorSession => {
    const found = sessions.get(id);
    if (!found) throw acp.RequestError.sessionNotFound(id);
    return found;
  };
  const describe = async (current: EditorSession) =>
    sessionOptions(await loadConfig(current.root, options.env), current.root, { ...current, fixed });

  return acp
    .agent({ name: "caesar" })
    .onRequest(acp.methods.agent.initialize, ({ params }) => {
      clientCapabilities = params.clientCapabilities ?? {};
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        agentCapabilities: {
          loadSession: false,
          promptCapabilities: { embeddedContext: true },
          mcpCapabilities: {},
        },
        agentInfo: { name: "caesar", title: "caesar", version: PACKAGE_VERSION },
        authMethods: [],
      };
    })
    .onRequest(acp.methods.agent.session.new, async ({ params, client }) => {
      try {
        const root = findProjectRoot(params.cwd, options.root);
        const config = await loadConfig(root, options.env);
        // A fixed delegate that does not exist is refused now, not at the first prompt.
        const delegate = options.delegate ?? { default: true as const };
        if ("agent" in delegate) findAdapter(config, root, delegate.agent);
        if ("role" in delegate) findRole(config, delegate.role);
        const created: EditorSession = {
          id: `caesar-${randomHex(8)}`,
          root,
          delegate,
          mode: "default",
          model: DEFAULT_VALUE,
          tasks: [],
        };
        sessions.set(created.id, created);
        // Once the editor has the session's id (the response goes first): the slash commands it offers.
        setTimeout(() => {
          void makeEditorLink(client, created.id).send({
            sessionUpdate: "available_commands_update",
            availableCommands: SLASH_COMMANDS,
          });
        }, 0);
        return { sessionId: created.id, ...(await describe(created)) };
      } catch (error) {
        throw toRequestError(error);
      }
    })
    .onRequest(acp.methods.agent.session.setMode, ({ params }) => {
      const current = session(params.sessionId);
      if (!isSessionMode(params.modeId))
        throw acp.RequestError.invalidParams({ modeId: params.modeId }, "unknown mode");
      current.mode = params.modeId;
      return {};
    })
    .onRequest(acp.methods.agent.session.setConfigOption, async ({ params }) => {
      const current = session(params.sessionId);
      const value = String(params.value);
      if (params.configId === MODE_OPTION && isSessionMode(value)) current.mode = value;
      else if (
        params.configId === MODEL_OPTION &&
        modelValues(await loadConfig(current.root, options.env)).includes(value)
      )
        current.model = value;
      else if (params.configId === DELEGATE_OPTION && !fixed && parseDelegateValue(value))
        current.delegate = parseDelegateValue(value)!;
      else
        throw acp.RequestError.invalidParams({ configId: params.configId, value }, "unknown option or value");
      return { configOptions: (await describe(current)).configOptions };
    })
    .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
      const current = session(params.sessionId);
      const command = parseSlashCommand(params.prompt);
      // /cancel is the one prompt taken while another runs.
      if (command && (command.name === "cancel" || !current.turn)) {
        await runSlashCommand(command, current, makeEditorLink(client, current.id));
        return { stopReason: "end_turn" };
      }
      if (current.turn)
        throw acp.RequestError.invalidRequest({}, "a prompt is already running in this session");
      const turn = new AbortController();
      current.turn = turn;
      try {
        const result = await runPromptTurn(params.prompt, {
          root: current.root,
          env: options.env,
          sessionId: current.id,
          delegate: current.delegate,
          mode: current.mode,
          ...(current.model !== DEFAULT_VALUE ? { model: current.model } : {}),
          client,
          started: (id) => current.tasks.push(id),
          clientCapabilities,
          cancelled: turn.signal,
          closed: options.closed,
          ...(current.previous ? { previous: current.previous } : {}),
        });
        if (result.task) current.previous = result.task;
        return { stopReason: result.stopReason };
      } finally {
        current.turn = undefined;
      }
    })
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      sessions.get(params.sessionId)?.turn?.abort();
    });
}

/** caesar's errors reach the editor with their message and remedy, and their stable code in `data`. */
function toRequestError(error: unknown): unknown {
  if (!isCaesarError(error)) return error;
  return acp.RequestError.invalidParams(
    { code: error.code, detail: error.detail },
    `${error.message}${error.detail ? ` ${error.detail}` : ""}`,
  );
}
