import type { EventBody } from "../protocol/event.js";
import type { McpServer } from "../protocol/mcp-server.js";
import type { PromptImage } from "../protocol/prompt-image.js";
import type { ToolPreview } from "../protocol/questions.js";
import type { Finding, Usage } from "../protocol/report.js";
import type { Mode, Task } from "../protocol/task.js";
import type { TaskPaths } from "../protocol/task-dir.js";
import type { FailureCode } from "./failure.js";

/**
 * What caesar can do about an agent's network:
 * - `toggle`: cut it or provide it, in every mode;
 * - `write-only`: choose only in write mode (in read-only mode the agent's sandbox always cuts it);
 * - `open`: always available, caesar cannot cut it;
 * - `none`: never available to the agent's tools.
 */
export type NetworkControl = "toggle" | "write-only" | "open" | "none";

/** Who enforces read-only mode: the operating system (a sandbox), the CLI's own tool policy, or nobody. */
export type ReadOnlyEnforcement = "os" | "policy" | "none";

/**
 * What caesar can do about the tools an agent may use (`[agents.<id>] allowed_tools / excluded_tools`):
 * restrict it to a list and remove tools by name, only remove tools by name, or nothing.
 */
export type ToolControl = "allow-and-exclude" | "exclude" | "none";

/** Tool restrictions for one run, in the agent CLI's own tool names. `allowed: null`: no allow-list. */
export interface ToolLists {
  allowed: string[] | null;
  excluded: string[];
}

/** A capability's value, with the one-line reason it is what it is. */
export interface Capability<T> {
  value: T;
  why: string;
}

/** What an adapter can really control — never more than it can guarantee (DESIGN.md, principle 5). */
export interface AgentCapabilities {
  network: Capability<NetworkControl>;
  readOnly: Capability<ReadOnlyEnforcement>;
  nativeSchema: Capability<boolean>;
  tools: Capability<ToolControl>;
  mcp: Capability<boolean>;
  resume: Capability<boolean>;
  model: Capability<boolean>;
  /** The CLI version the capabilities were verified on (undefined for custom agents). */
  verifiedOn?: string;
  /** Verified range, as semver bounds; outside it `caesar doctor` warns. */
  verifiedRange?: { min: string; max: string };
  /** True when nothing here could be run (e.g. a CLI with no installable binary): shown as unverified. */
  unverified?: boolean;
}

export interface Detection {
  installed: boolean;
  /** Resolved executable path, when installed. */
  path?: string;
  version?: string;
  /** Set when the version is outside the verified range, or could not be read. */
  warning?: string;
}

/** The return channel an adapter should make its CLI load for this run only, when it can. */
export interface ChannelServer {
  /** Server name (tool names derive from it, e.g. `mcp__caesar__ask_orchestrator`). */
  name: string;
  command: string;
  args: string[];
  /** The server's own environment (the task directory travels here or in args, never by inheritance). */
  env: Record<string, string>;
  /** The tools it serves (an ACP agent's permission requests for them are granted). */
  tools?: string[];
}

/** Everything the engine decided, handed to the adapter to build its command line. */
export interface LaunchContext {
  task: Task;
  paths: TaskPaths;
  /** The brief: objective, context, constraints, acceptance criteria and the OACP instructions. */
  prompt: string;
  mode: Mode;
  /** Resolved network: false only when the adapter's capabilities let caesar cut it. */
  network: boolean;
  model?: string;
  /** Tool restrictions to apply, as far as `capabilities.tools` allows (the engine reports the rest). */
  tools: ToolLists;
  /** Arguments the user gave after `--`, passed verbatim. */
  extraArgs: string[];
  channel?: ChannelServer;
  /** Images that go with the brief (an editor's prompt), when the adapter takes them. */
  images?: PromptImage[];
  /** More MCP servers for this run (the editor's, `caesar acp`), when the adapter takes them. */
  mcpServers?: McpServer[];
  /** Directories outside the workspace the agent must be able to read and write (the task directory). */
  extraDirs: string[];
  /** A private directory for this run's generated files (CLI config, schema files, last message). */
  runtimeDir: string;
  /**
   * The agent runs in caesar's OS sandbox: everything of the user's is read-only, so the CLI's own state
   * (sessions, caches, helper binaries) gets a per-task home under `runtimeDir` (sandbox-home.ts).
   */
  sandboxed?: boolean;
  /**
   * Under caesar's sandbox, a worktree task's registration in git (`<common>/worktrees/<name>`): where the
   * agent's git writes HEAD, the index and its own objects (a CLI sandbox nested inside must allow it).
   */
  gitDir?: string;
  /** The environment the agent inherits, CAESAR_* included. Adapters add to it, never mutate it. */
  env: Readonly<Record<string, string>>;
  /**
   * Continue this session of the CLI (its id, as the previous run's stream gave it) with `prompt` as the
   * next message, instead of starting a new one. Set only when `capabilities.resume` is true.
   */
  resume?: string;
}

export interface CommandLine {
  bin: string;
  args: string[];
  /** Variables to add to the launch environment. */
  env: Record<string, string>;
  cwd: string;
  /** Files to write before launch (per-run configuration), absolute paths inside runtimeDir or the task dir. */
  files?: { path: string; content: string }[];
  /**
   * Symbolic links to create before launch (`path` → `target`), e.g. a per-run overlay of a CLI's home
   * directory that keeps the user's credentials. `writeLaunchFiles` writes files and links.
   */
  links?: { path: string; target: string }[];
  /** Paths the adapter materialised in the workspace (excluded from the diff, prefix semantics). */
  materialised?: string[];
  /**
   * Files the CLI itself writes during the run and the translator reads after it (a last message, a
   * usage file): removed before launch, so a later run of the same task never reads an earlier one's.
   */
  outputs?: string[];
  /** The command as shown to people (in the `started` event): secrets never appear here. */
  display: string;
}

/** What a translator gives back for one line: events to append, in order. */
export type TranslatedEvents = EventBody[];

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What the agent's stream said once the process has ended. */
export interface StreamOutcome {
  /** A raw report from the CLI's native structured output (tier 2), to be validated by the engine. */
  nativeReport?: unknown;
  /** The agent's last message, searched by the degraded tier (fenced block, self-declared JSON). */
  finalText?: string;
  usage?: Usage;
  /** Findings the stream revealed (denied permissions, tools removed, …). */
  findings?: Finding[];
  /** The CLI's session id, when its stream gave one (to continue the session: `LaunchContext.resume`). */
  session?: string;
  /** `usage` counts the whole session, its earlier runs included (a continued codex thread), not this run. */
  usageCoversSession?: boolean;
  /**
   * A failure the stream reported (model unreachable, 401, 429…): fails the report with this cause.
   * `announced`: the translator already returned an `error` event for it (the engine writes none then).
   */
  failure?: { message: string; code?: FailureCode; announced?: boolean };
  /**
   * Events to append after the last line: text the stream was still accumulating, and tools left open
   * when the process ended (closed as `failed`), so every `started` has its end.
   */
  events?: TranslatedEvents;
  /**
   * How the run went, when a session adapter knows better than the exit code: an ACP agent is a server
   * that caesar ends once its session is over, so its exit status says nothing about the work.
   */
  processOutcome?: "succeeded" | "failed";
  /**
   * The agent's stdout is a protocol's frames (an ACP session's JSON-RPC), not its words: the degraded
   * tier searches only its messages (`finalText`), never raw.log, where a message's chunks are cut apart.
   */
  stdoutIsProtocol?: boolean;
}

/** Turns an agent CLI's native output into caesar.event/v1 events, one line at a time. */
export interface StreamTranslator {
  stdout(line: string): TranslatedEvents;
  stderr?(line: string): TranslatedEvents;
  /**
   * A translator that reads no line of stdout (it keeps only the end of it) takes stdout as the bytes the
   * agent wrote instead: the runner then neither decodes nor splits any of it (a flood costs a read and a
   * write). The bytes are lent for the call only: a translator keeping some copies them.
   */
  stdoutBytes?(bytes: Uint8Array): void;
  finish(exit: ProcessExit): Promise<StreamOutcome>;
}

/**
 * The conductor's side of a session an adapter drives over the agent's stdin and stdout (ACP): the runner
 * still owns the process group, raw.log, the deadline, cancellation and recovery; the driver owns the
 * conversation.
 */
export interface SessionHost {
  /** Write one message to the agent's stdin (a newline is added). */
  send(line: string): void;
  /** Append events to events.jsonl, in order. */
  emit(events: TranslatedEvents): void;
  /** Aborted when the task is cancelled or its deadline passes: the driver cancels the session. */
  stopping: AbortSignal;
  /** The session is over: the runner closes stdin and ends the process group. */
  done(): void;
  /** A line for raw.log (caesar's own notes, prefixed `[caesar]`). */
  note(text: string): void;
  /**
   * Ask the person following the task (a question in the task directory: any front end can answer it).
   * Resolves with the chosen option, or undefined when nobody answered before the task's deadline.
   * Present only when the task asks a person about permissions (`caesar acp`).
   */
  askPerson?(question: string, options: string[], tool?: ToolPreview): Promise<string | undefined>;
  /**
   * After a turn ends well, the next prompt to send in the same session, if any (a follow-up turn, e.g.
   * after failing checks). Absent or resolving undefined: the session is over.
   */
  nextPrompt?(turn: SessionTurn): Promise<string | undefined>;
}

/** How one prompt turn of a session ended. */
export interface SessionTurn {
  /** The agent's stop reason (`end_turn`, `max_tokens`, `refusal`, …). */
  stopReason: string;
  /** The agent's last message in that turn. */
  finalText?: string;
  /** 1 for the brief, 2 for the first follow-up, … */
  turn: number;
}

/** What a session adapter gives the runner: the agent's output goes in, the outcome comes out. */
export interface SessionDriver {
  /** A line the agent wrote on stdout (already teed to raw.log). */
  stdout(line: string): void;
  stderr?(line: string): void;
  /** The process has ended and its output is drained: settle what is pending and say how it went. */
  finish(exit: ProcessExit): Promise<StreamOutcome>;
}

/**
 * What the agent's CLI may write under caesar's OS sandbox beyond its workspace, task directory and private
 * /tmp: its home of the task's (under the task's runtime folder) and the variables that point there, and
 * whether its own sandbox stays on inside caesar's (`caesar doctor`; docs/adapters.md).
 */
export interface SandboxState {
  /** The CLI's home of the task's, relative to the task directory (`runtime/codex-home`). */
  home: string;
  /** The variables that point the CLI there. */
  variables: string[];
  own: Capability<"nested" | "off" | "none">;
}

interface AdapterBase {
  /** The id users type (`--agent codex`). */
  id: string;
  displayName: string;
  /** `builtin` for the catalogue CLIs, `custom` for `[[agent]]` entries. */
  kind: "builtin" | "custom";
  /** The agent "product", used by the recursion rule (claude → claude). */
  product: string;
  /** `acp` for agents driven over the Agent Client Protocol; absent for the CLIs whose output is translated. */
  protocol?: "acp";
  capabilities: AgentCapabilities;
  /**
   * Whether the agent can be handed more MCP servers for one run (`LaunchContext.mcpServers`, the editor's
   * with `caesar acp`), and the one-line reason. Absent: it cannot; the front end says so.
   */
  extraMcpServers?: Capability<boolean>;
  /** Whether images can go with the brief (`LaunchContext.images`), and why. Absent: they cannot. */
  images?: Capability<boolean>;
  /** Its state under caesar's OS sandbox, for the CLIs that get a home of the task's (sandbox-home.ts). */
  sandbox?: SandboxState;
  detect(env?: NodeJS.ProcessEnv): Promise<Detection>;
  buildCommand(launch: LaunchContext): CommandLine;
}

/** An agent whose native output is translated line by line (the five CLIs' exec modes, custom agents). */
export interface LineAgentAdapter extends AdapterBase {
  createTranslator(launch: LaunchContext): StreamTranslator;
  drive?: undefined;
}

/** An agent driven through a session on its stdin and stdout (ACP): the runner uses `drive`, not a translator. */
export interface SessionAgentAdapter extends AdapterBase {
  drive(launch: LaunchContext, host: SessionHost): SessionDriver;
  createTranslator?: undefined;
}

export type AgentAdapter = LineAgentAdapter | SessionAgentAdapter;
