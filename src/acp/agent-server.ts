import { isAbsolute } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { findAdapter } from "../agents/registry.js";
import { loadConfig } from "../config/effective.js";
import { findProjectRoot } from "../config/project-root.js";
import { findRole } from "../policy/roles.js";
import type { McpServer } from "../protocol/mcp-server.js";
import { describeError, isCaesarError } from "../support/errors.js";
import { PACKAGE_VERSION } from "../support/package-version.js";
import { randomHex } from "../support/random.js";
import { makeEditorLink } from "./editor-link.js";
import { editorMcpServers } from "./editor-mcp.js";
import { runPromptTurn } from "./prompt-turn.js";
import { promptText, replayHistory } from "./session-history.js";
import {
  DEFAULT_VALUE,
  DELEGATE_OPTION,
  type Delegate,
  delegateValue,
  isSessionMode,
  MODE_OPTION,
  MODEL_OPTION,
  modelValues,
  parseDelegateValue,
  type SessionMode,
  sessionOptions,
} from "./session-options.js";
import { listSessions, loadSession, type StoredSession, saveSession } from "./session-store.js";
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
  /** What the session's tasks cost so far, in USD (from their reports; this process's only). */
  costUsd: number;
  /** The session's tasks, oldest first (the slash commands act on them). */
  tasks: string[];
  /** The folder the editor opened the session in. */
  cwd: string;
  /** Each prompt and what became of it, as kept in caesar's records. */
  turns: StoredSession["turns"];
  /**
   * The editor's MCP servers (session/new, load, resume): the person's configuration, passed on to the
   * delegate where it can take them. Never kept in the session's record: the editor gives them each time.
   */
  mcpServers: McpServer[];
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
  // Kept in caesar's records after every change, so that a later `caesar acp` can load it; a record
  // that cannot be written costs the session its future, not its present.
  const persist = (current: EditorSession) =>
    saveSession(current.root, {
      id: current.id,
      cwd: current.cwd,
      delegate: delegateValue(current.delegate),
      mode: current.mode,
      model: current.model,
      ...(current.turns[0] ? { title: current.turns[0].prompt.slice(0, 120) } : {}),
      turns: current.turns,
    }).catch(() => undefined);
  const offerCommands = (client: acp.AgentContext, id: string) =>
    // Once the editor has the session's id (the response goes first): the slash commands it offers.
    setTimeout(() => {
      void makeEditorLink(client, id).send({
        sessionUpdate: "available_commands_update",
        availableCommands: SLASH_COMMANDS,
      });
    }, 0);
  const isOffered = async (current: EditorSession, configId: string, value: string) => {
    const option = (await describe(current)).configOptions.find((candidate) => candidate.id === configId);
    return (
      option?.type === "select" &&
      (option.options as { value: string }[]).some((candidate) => candidate.value === value)
    );
  };
  const fixedDelegateTakesImages = async (): Promise<boolean> => {
    const delegate = options.delegate;
    if (!delegate || !("agent" in delegate)) return false;
    try {
      const root = findProjectRoot(options.root ?? process.cwd(), options.root);
      return findAdapter(await loadConfig(root, options.env), root, delegate.agent).images?.value === true;
    } catch {
      return false;
    }
  };
  /** A stored session brought back (`session/load`, `session/resume`): its options, tasks and history. */
  const restore = async (params: {
    sessionId: string;
    cwd: string;
    mcpServers?: acp.McpServer[];
  }): Promise<EditorSession> => {
    if (!isAbsolute(params.cwd))
      throw acp.RequestError.invalidParams({ cwd: params.cwd }, "cwd must be an absolute path");
    const root = findProjectRoot(params.cwd, options.root);
    const stored = await loadSession(root, params.sessionId);
    if (!stored) throw acp.RequestError.resourceNotFound(params.sessionId);
    // Loaded again while live here: a prompt under way stays under way (and cancellable).
    const live = sessions.get(stored.id);
    const restored: EditorSession = {
      ...(live?.turn ? { turn: live.turn } : {}),
      id: stored.id,
      root,
      cwd: stored.cwd,
      delegate: options.delegate ?? parseDelegateValue(stored.delegate) ?? { default: true },
      mode: isSessionMode(stored.mode) ? stored.mode : "default",
      model: stored.model,
      turns: stored.turns,
      costUsd: 0,
      mcpServers: editorMcpServers(params.mcpServers),
      tasks: stored.turns.flatMap((turn) => (turn.task ? [turn.task] : [])),
    };
    const last = [...stored.turns].reverse().find((turn) => turn.task);
    if (last?.task) restored.previous = { id: last.task, summary: last.summary ?? "" };
    sessions.set(restored.id, restored);
    return restored;
  };

  return acp
    .agent({ name: "caesar" })
    .onRequest(acp.methods.agent.initialize, async ({ params }) => {
      clientCapabilities = params.clientCapabilities ?? {};
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        agentCapabilities: {
          loadSession: true,
          sessionCapabilities: { list: {}, resume: {}, close: {} },
          // Images only when every prompt goes to an agent that takes them (`--agent`): the session's
          // delegate may change, and an image an agent cannot take would be refused.
          promptCapabilities: { embeddedContext: true, image: await fixedDelegateTakesImages() },
          // Passed on to the delegate where it takes them (HTTP and SSE: an ACP delegate that says so).
          mcpCapabilities: { http: true, sse: true },
        },
        agentInfo: { name: "caesar", title: "caesar", version: PACKAGE_VERSION },
        authMethods: [],
      };
    })
    .onRequest(acp.methods.agent.session.new, async ({ params, client }) => {
      try {
        if (!isAbsolute(params.cwd))
          throw acp.RequestError.invalidParams({ cwd: params.cwd }, "cwd must be an absolute path");
        const root = findProjectRoot(params.cwd, options.root);
        const config = await loadConfig(root, options.env);
        // A fixed delegate that does not exist is refused now, not at the first prompt.
        const delegate = options.delegate ?? { default: true as const };
        if ("agent" in delegate) findAdapter(config, root, delegate.agent);
        if ("role" in delegate) findRole(config, delegate.role);
        const created: EditorSession = {
          id: `caesar-${randomHex(8)}`,
          root,
          cwd: params.cwd,
          delegate,
          mode: "default",
          model: DEFAULT_VALUE,
          tasks: [],
          turns: [],
          costUsd: 0,
          mcpServers: editorMcpServers(params.mcpServers),
        };
        sessions.set(created.id, created);
        await persist(created);
        offerCommands(client, created.id);
        return { sessionId: created.id, ...(await describe(created)) };
      } catch (error) {
        throw toRequestError(error);
      }
    })
    .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
      try {
        const restored = await restore(params);
        await replayHistory(restored, makeEditorLink(client, restored.id));
        offerCommands(client, restored.id);
        return await describe(restored);
      } catch (error) {
        throw toRequestError(error);
      }
    })
    .onRequest(acp.methods.agent.session.resume, async ({ params, client }) => {
      try {
        const restored = await restore(params);
        offerCommands(client, restored.id);
        return await describe(restored);
      } catch (error) {
        throw toRequestError(error);
      }
    })
    .onRequest(acp.methods.agent.session.list, async ({ params }) => {
      const cwd = params.cwd ?? options.root ?? process.cwd();
      const stored = await listSessions(findProjectRoot(cwd, options.root));
      return {
        sessions: stored.map((session) => ({
          sessionId: session.id,
          cwd: session.cwd,
          ...(session.title ? { title: session.title } : {}),
          updatedAt: session.updated_at,
        })),
      };
    })
    .onRequest(acp.methods.agent.session.close, ({ params }) => {
      // ACP: as if session/cancel came first — a task under way is cancelled — then forgotten here (its
      // record stays, to load later).
      const current = session(params.sessionId);
      current.turn?.abort();
      sessions.delete(current.id);
      return {};
    })
    .onRequest(acp.methods.agent.session.setMode, async ({ params }) => {
      const current = session(params.sessionId);
      if (!isSessionMode(params.modeId))
        throw acp.RequestError.invalidParams({ modeId: params.modeId }, "unknown mode");
      current.mode = params.modeId;
      await persist(current);
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
      else if (
        params.configId === DELEGATE_OPTION &&
        !fixed &&
        (await isOffered(current, DELEGATE_OPTION, value))
      )
        // Only a value the session offers: `agent:<unknown>` would make every later prompt fail.
        current.delegate = parseDelegateValue(value)!;
      else
        throw acp.RequestError.invalidParams({ configId: params.configId, value }, "unknown option or value");
      await persist(current);
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
          mcpServers: current.mcpServers,
          costSoFar: current.costUsd,
        });
        if (result.task) current.previous = result.task;
        current.costUsd += result.costUsd ?? 0;
        current.turns.push({
          prompt: promptText(params.prompt),
          ...(result.task ? { task: result.task.id, summary: result.task.summary } : {}),
        });
        await persist(current);
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
  return acp.RequestError.invalidParams({ code: error.code, detail: error.detail }, describeError(error));
}
