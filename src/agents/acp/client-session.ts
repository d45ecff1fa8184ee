import * as acp from "@agentclientprotocol/sdk";
import type { EventBody } from "../../protocol/event.js";
import { messageOf } from "../../support/errors.js";
import { PACKAGE_VERSION } from "../../support/package-version.js";
import type { LaunchContext, ProcessExit, SessionDriver, SessionHost, StreamOutcome } from "../adapter.js";
import { LineStream } from "./line-stream.js";
import { decidePermission, type PermissionVerdict } from "./permission-policy.js";
import { SessionEvents } from "./session-events.js";
import { previewOf } from "./tool-preview.js";
import { PathMissingError, PathRefusedError, WorkspaceFiles } from "./workspace-fs.js";

/** What an ACP agent is told caesar serves, and how its session is set up. */
export interface AcpClientOptions {
  /** `fs/read_text_file` / `fs/write_text_file` served (inside the workspace only). */
  fs: { read: boolean; write: boolean };
  /** Select the model through the session's `model` config option (else the adapter's command line did). */
  modelByConfigOption: boolean;
  /**
   * The session mode and config option values that make the agent ask before commands and edits (set
   * when the session starts elsewhere, e.g. from the user's settings).
   */
  session?: { mode?: string; config?: Record<string, string> };
  /** The return channel goes in session/new's mcpServers (default), or the command line carries it. */
  channelInSession?: boolean;
}

/** Stop reasons after which the work counts as done (the report says how well). */
const FINISHED = new Set(["end_turn", "max_tokens", "max_turn_requests", "cancelled"]);

/**
 * caesar as the ACP client of one agent process: `initialize` (declaring only what it serves),
 * `session/new` in the task's workspace with the return channel among its MCP servers, then
 * `session/prompt` with the brief. Updates become events; permission requests are answered by caesar's
 * policy (and a person, when the task asks one); file requests are served inside the workspace only;
 * `session/cancel` when the task is stopped.
 */
export class AcpClientSession implements SessionDriver {
  private readonly lines: LineStream;
  private readonly events: SessionEvents;
  private readonly files: WorkspaceFiles;
  private readonly run: Promise<void>;
  private stopReason?: string;
  private sessionId?: string;
  /** The agent takes image blocks in a prompt (its initialize's promptCapabilities). */
  private takesImages = false;
  private connection?: acp.ClientContext;
  private prompting = false;

  constructor(
    private readonly launch: LaunchContext,
    private readonly host: SessionHost,
    private readonly options: AcpClientOptions,
  ) {
    this.lines = new LineStream(host.send);
    this.events = new SessionEvents(launch.task.workspace);
    // Writes: the workspace in a write task, and the report whatever the mode — never the rest of the task
    // directory (an agent writing answers/ would grant its own permissions).
    this.files = new WorkspaceFiles({
      read: [launch.task.workspace, ...launch.extraDirs],
      write: launch.mode === "write" ? [launch.task.workspace] : [],
      writeFiles: [launch.paths.report],
    });
    // A task stopped while this client was still loading (lazy-driver.ts) is cancelled as soon as it exists.
    if (host.stopping.aborted) queueMicrotask(() => this.cancel());
    else host.stopping.addEventListener("abort", () => this.cancel(), { once: true });
    this.run = this.converse().catch((error) => this.failed(error));
  }

  stdout(line: string): void {
    this.lines.push(line);
  }

  stderr(line: string): void {
    this.events.state.noteStderr(line);
  }

  async finish(exit: ProcessExit): Promise<StreamOutcome> {
    this.lines.close();
    await this.run;
    const state = this.events.state;
    if (this.stopReason === undefined && !this.host.stopping.aborted && !state.failure) {
      const how = exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`;
      const stderr = state.lastStderr ? `; stderr: ${state.lastStderr}` : "";
      state.fail(
        `the agent exited (${how}) before its turn ended${stderr}`,
        undefined,
        exit.signal ? "agent_killed" : "agent_error",
      );
    }
    // A tool call still open when the turn ended was never closed by the agent (codex-acp now and then
    // drops a command's end on a busy machine): say that, not that the agent exited — caesar ended it.
    if (this.stopReason !== undefined)
      this.emit(state.tools.closeAll("the agent ended its turn without saying how this call ended"));
    // Once the turn is over, or the task is being stopped, caesar ends the process itself: how it ended
    // (SIGTERM, exit code) is caesar's doing, not the agent's failure.
    const endedByCaesar = this.stopReason !== undefined || this.host.stopping.aborted;
    const outcome = this.events.outcome(endedByCaesar ? { code: 0, signal: null } : exit);
    // A cancel caesar asked for is the runner's outcome (cancelled, timed out), never "succeeded".
    const finished =
      this.stopReason !== undefined &&
      FINISHED.has(this.stopReason) &&
      !state.failure &&
      !this.host.stopping.aborted;
    return { ...outcome, processOutcome: finished ? "succeeded" : "failed", stdoutIsProtocol: true };
  }

  private emit(events: EventBody[]): void {
    if (events.length > 0) this.host.emit(events);
  }

  private async converse(): Promise<void> {
    const app = acp
      .client({ name: "caesar" })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        // Updates for another session are not ours (one may arrive before session/new's answer is read).
        if (this.sessionId === undefined || params.sessionId === this.sessionId)
          this.emit(this.events.update(params.update));
      })
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) => this.permission(params))
      .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => this.readFile(params))
      .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => this.writeFile(params));
    await app.connectWith(this.lines.stream, async (ctx) => {
      this.connection = ctx;
      const init = await ctx.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {
          fs: { readTextFile: this.options.fs.read, writeTextFile: this.options.fs.write },
          // Not served: the agent's own commands already run in its process group, which caesar ends
          // as one on cancel and deadline; a client terminal would run them outside it.
          terminal: false,
        },
        clientInfo: { name: "caesar", title: "caesar", version: PACKAGE_VERSION },
      });
      if (init.protocolVersion !== acp.PROTOCOL_VERSION) {
        throw new Error(
          `the agent speaks ACP version ${init.protocolVersion}; caesar speaks version ${acp.PROTOCOL_VERSION}`,
        );
      }
      this.takesImages = init.agentCapabilities?.promptCapabilities?.image === true;
      if (this.host.stopping.aborted) return;
      const channel = this.options.channelInSession === false ? undefined : this.launch.channel;
      const request: acp.NewSessionRequest = {
        cwd: this.launch.task.workspace,
        mcpServers: [
          ...(channel
            ? [
                {
                  name: channel.name,
                  command: channel.command,
                  args: channel.args,
                  env: Object.entries(channel.env).map(([name, value]) => ({ name, value })),
                },
              ]
            : []),
          ...this.extraServers(init.agentCapabilities?.mcpCapabilities ?? {}, channel?.name),
        ],
      };
      const session = await ctx.request(acp.methods.agent.session.new, request);
      this.sessionId = session.sessionId;
      await this.setUp(ctx, session);
      await this.selectModel(ctx, session);
      await this.prompt(ctx);
    });
    this.host.done();
  }

  /**
   * The other MCP servers of this run (the editor's), as the agent can take them: every ACP agent takes
   * stdio servers, HTTP and SSE ones only when it says so. One it cannot take is a finding, never dropped
   * silently; one named like the return channel is left out (its tools would be taken for caesar's).
   */
  private extraServers(capabilities: acp.McpCapabilities, channelName: string | undefined): acp.McpServer[] {
    const servers: acp.McpServer[] = [];
    for (const server of this.launch.mcpServers ?? []) {
      let refused: string | undefined;
      if (server.name === channelName) refused = "it is named like caesar's return channel";
      else if (server.transport !== "stdio" && capabilities[server.transport] !== true)
        refused = `the agent does not take ${server.transport.toUpperCase()} MCP servers`;
      if (refused) {
        this.events.state.addFinding({
          severity: "medium",
          title: `MCP server ${server.name} not passed on to the agent`,
          detail: `${refused}; the agent ran without it.`,
        });
        this.emit([{ type: "progress", message: `MCP server ${server.name} not passed on: ${refused}` }]);
        continue;
      }
      servers.push(
        server.transport === "stdio"
          ? {
              name: server.name,
              command: server.command,
              args: server.args,
              env: Object.entries(server.env).map(([name, value]) => ({ name, value })),
            }
          : {
              type: server.transport,
              name: server.name,
              url: server.url,
              headers: Object.entries(server.headers).map(([name, value]) => ({ name, value })),
            },
      );
    }
    return servers;
  }

  /** The brief, then any follow-up turn the host asks for, in the same session. */
  private async prompt(ctx: acp.ClientContext): Promise<void> {
    let text: string | undefined = this.launch.prompt;
    for (let turn = 1; text !== undefined && !this.host.stopping.aborted; turn++) {
      this.prompting = true;
      const result = await ctx
        .request(acp.methods.agent.session.prompt, {
          sessionId: this.sessionId!,
          prompt: [{ type: "text", text }, ...(turn === 1 ? this.images() : [])],
        })
        .finally(() => {
          this.prompting = false;
        });
      this.emit(this.events.flush());
      this.events.promptResult(result);
      this.stopReason = result.stopReason;
      if (result.stopReason === "refusal") this.events.state.fail("the agent refused to continue");
      if (result.stopReason === "cancelled" && !this.host.stopping.aborted) {
        // Some agents end their turn when a permission is refused (codex's "abort", copilot): the work
        // is over, as far as it goes; the report (or its absence) says how far.
        this.events.state.addFinding({
          severity: "medium",
          title: "The agent ended its turn itself (stop reason: cancelled)",
          detail: "caesar did not cancel it; agents do this when a permission they asked for is refused.",
        });
      }
      if (result.stopReason === "max_tokens" || result.stopReason === "max_turn_requests") {
        this.events.state.addFinding({
          severity: "medium",
          title: `The agent stopped early (${result.stopReason})`,
          detail: "Its turn ended on a limit, not because it was done.",
        });
      }
      if (result.stopReason !== "end_turn" || !this.host.nextPrompt) break;
      text = await this.host.nextPrompt({
        stopReason: result.stopReason,
        turn,
        ...(this.events.state.finalText !== undefined ? { finalText: this.events.state.finalText } : {}),
      });
    }
  }

  /** The brief's images as image blocks, when the agent takes them; else a finding, never dropped silently. */
  private images(): acp.ContentBlock[] {
    const images = this.launch.images ?? [];
    if (images.length === 0) return [];
    if (!this.takesImages) {
      this.events.state.addFinding({
        severity: "medium",
        title: `${images.length} image(s) not passed on to the agent`,
        detail:
          "Its initialize does not say it takes images in a prompt (promptCapabilities.image); it worked from the text alone.",
      });
      return [];
    }
    return images.map((image) => ({ type: "image", mimeType: image.mime_type, data: image.data }));
  }

  /** The mode and options that make the agent ask; failing to set them is a finding, never silent. */
  private async setUp(ctx: acp.ClientContext, session: acp.NewSessionResponse): Promise<void> {
    const wanted = this.options.session;
    const sessionId = session.sessionId;
    const failed = (what: string, error: unknown) =>
      this.events.state.addFinding({
        severity: "high",
        title: `Could not set the agent's ${what}`,
        detail: `${messageOf(error)}. The agent may act without asking, so caesar's policy may not see every command and edit.`,
      });
    if (wanted?.mode && session.modes && session.modes.currentModeId !== wanted.mode) {
      await ctx
        .request(acp.methods.agent.session.setMode, { sessionId, modeId: wanted.mode })
        .catch((error) => failed(`mode to ${wanted.mode}`, error));
    }
    for (const [configId, value] of Object.entries(wanted?.config ?? {})) {
      const option = (session.configOptions ?? []).find((candidate) => candidate.id === configId);
      if (!option || option.currentValue === value) continue;
      await ctx
        .request(acp.methods.agent.session.setConfigOption, { sessionId, configId, value })
        .catch((error) => failed(`${configId} to ${value}`, error));
    }
  }

  private async selectModel(ctx: acp.ClientContext, session: acp.NewSessionResponse): Promise<void> {
    const model = this.launch.model;
    if (!model || !this.options.modelByConfigOption) return;
    const option = (session.configOptions ?? []).find((candidate) => candidate.category === "model");
    if (!option) {
      this.events.state.addFinding({
        severity: "medium",
        title: `Model ${model} not applied`,
        detail:
          "The agent's session offers no model option (session/set_config_option); it used its own default.",
      });
      return;
    }
    try {
      await ctx.request(acp.methods.agent.session.setConfigOption, {
        sessionId: session.sessionId,
        configId: option.id,
        value: model,
      });
    } catch (error) {
      this.events.state.addFinding({
        severity: "medium",
        title: `Model ${model} not applied`,
        detail: `The agent refused it: ${messageOf(error)}`,
      });
    }
  }

  private async permission(params: acp.RequestPermissionRequest): Promise<acp.RequestPermissionResponse> {
    // After session/cancel every pending permission request is answered `cancelled` (ACP prompt turn).
    if (this.host.stopping.aborted) return { outcome: { outcome: "cancelled" } };
    const call = this.events.calls.merge(params.toolCall);
    if (!call) return { outcome: { outcome: "cancelled" } };
    let verdict: PermissionVerdict = await decidePermission(call, {
      mode: this.launch.mode,
      workspace: this.launch.task.workspace,
      readableDirs: this.launch.extraDirs,
      writableFiles: [this.launch.paths.report],
      ...(this.launch.channel
        ? { channel: { name: this.launch.channel.name, tools: this.launch.channel.tools ?? [] } }
        : {}),
    });
    // The return channel only talks to caesar: asking about it would precede every question with a
    // needless "Allow ask_orchestrator?".
    if (verdict.allow && !verdict.channel && this.host.askPerson) {
      const answer = await this.host.askPerson(
        `The agent asks permission: ${call.title || call.kind}. Allow it?`,
        ["Allow", "Reject"],
        previewOf(call),
      );
      if (this.host.stopping.aborted) return { outcome: { outcome: "cancelled" } };
      verdict =
        answer === "Allow"
          ? { allow: true, reason: `${verdict.reason}; allowed by the person following the task` }
          : {
              allow: false,
              reason:
                answer === undefined ? "nobody answered in time" : "refused by the person following the task",
            };
    }
    this.emit(this.events.permission(call, verdict));
    // Once only: every later call asks again, so the policy judges each one.
    const wanted = verdict.allow ? ["allow_once", "allow_always"] : ["reject_once", "reject_always"];
    for (const kind of wanted) {
      const option = params.options.find((candidate) => candidate.kind === kind);
      if (option) return { outcome: { outcome: "selected", optionId: option.optionId } };
    }
    return { outcome: { outcome: "cancelled" } };
  }

  private async readFile(params: acp.ReadTextFileRequest): Promise<acp.ReadTextFileResponse> {
    try {
      return { content: await this.files.read(params.path, params.line, params.limit) };
    } catch (error) {
      throw this.fileError("fs/read_text_file", params.path, error);
    }
  }

  private async writeFile(params: acp.WriteTextFileRequest): Promise<acp.WriteTextFileResponse> {
    try {
      await this.files.write(params.path, params.content);
    } catch (error) {
      throw this.fileError("fs/write_text_file", params.path, error);
    }
    this.emit(this.events.wroteFile(params.path));
    return {};
  }

  private fileError(method: string, path: string, error: unknown): acp.RequestError {
    if (error instanceof PathMissingError) return acp.RequestError.resourceNotFound(path);
    if (error instanceof PathRefusedError) {
      this.emit(this.events.refusedFile(method, path, error.reason));
      return acp.RequestError.invalidParams({ path }, error.message);
    }
    return acp.RequestError.internalError({ path }, messageOf(error));
  }

  private cancel(): void {
    if (this.connection && this.sessionId && this.prompting) {
      // A tool still running now is interrupted by caesar, whatever the agent later says of it (gemini
      // reports a killed command as completed): it ends failed, and a later update for it is ignored.
      this.emit(this.events.state.tools.closeAll("interrupted: caesar cancelled the session"));
      this.host.note("session/cancel sent");
      void this.connection
        .notify(acp.methods.agent.session.cancel, { sessionId: this.sessionId })
        .catch(() => undefined);
    } else {
      this.host.done();
    }
  }

  private failed(error: unknown): void {
    // Stopped on purpose, or the process went away first: finish() says which, from the exit.
    if (this.host.stopping.aborted) {
      this.host.done();
      return;
    }
    if (this.lines.isClosed) return;
    const code = error instanceof acp.RequestError ? error.code : undefined;
    const message = messageOf(error);
    this.events.state.fail(
      code === -32000 ? `the agent needs authentication: ${message}` : message,
      code === -32000 ? 401 : undefined,
    );
    this.host.note(`the ACP session failed: ${message}`);
    this.host.done();
  }
}
