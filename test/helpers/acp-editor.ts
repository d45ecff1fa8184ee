import { type ChildProcess, spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { CAESAR_BIN } from "./cli.js";

/** What an editor saw of a `caesar acp` session. */
export interface EditorRecord {
  updates: acp.SessionUpdate[];
  permissions: acp.RequestPermissionRequest[];
  stderr: string;
}

export interface EditorOptions {
  cwd: string;
  args?: string[];
  env?: NodeJS.ProcessEnv;
  /** How the editor's user answers a permission request (default: the first allow option). */
  answer?: (
    request: acp.RequestPermissionRequest,
  ) => acp.RequestPermissionResponse | Promise<acp.RequestPermissionResponse>;
}

/**
 * `caesar acp` as an editor runs it: the real binary as a child process, driven with the SDK's own client
 * over its stdin and stdout.
 */
export function startEditor(options: EditorOptions) {
  const child: ChildProcess = spawn(process.execPath, [CAESAR_BIN, "acp", ...(options.args ?? [])], {
    cwd: options.cwd,
    env: { ...process.env, NO_COLOR: "1", ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const record: EditorRecord = { updates: [], permissions: [], stderr: "" };
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    record.stderr += chunk;
  });
  const listeners = new Set<() => void>();
  const changed = () => {
    for (const listener of listeners) listener();
  };
  const app = acp
    .client({ name: "test-editor" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      record.updates.push(params.update);
      changed();
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      record.permissions.push(params);
      changed();
      if (options.answer) return options.answer(params);
      const allow = params.options.find((option) => option.kind.startsWith("allow"));
      return { outcome: { outcome: "selected", optionId: (allow ?? params.options[0]!).optionId } };
    });
  const connection = app.connect(
    acp.ndJsonStream(
      Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
    ),
  );
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    record,
    agent: connection.agent,
    exited,
    /** `initialize`, as an editor without client capabilities sends it. */
    initialize() {
      return connection.agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      });
    },
    /** `initialize`, then a new session in `cwd` with no MCP server of the editor's. */
    async openSession(cwd: string) {
      await this.initialize();
      return connection.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    },
    /** Resolve once an update or permission request satisfies `test` (already received ones count). */
    waitFor(test: (record: EditorRecord) => boolean, timeoutMs = 60_000): Promise<void> {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!test(record)) return;
          listeners.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`timed out waiting; stderr: ${record.stderr}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
    /** The editor closes: its side of the pipes goes away. */
    close() {
      connection.close();
      child.stdin!.end();
    },
  };
}

/** The text of every agent message chunk, joined. */
export function messages(record: EditorRecord): string {
  return record.updates
    .filter((update) => update.sessionUpdate === "agent_message_chunk")
    .map((update) => (update.content.type === "text" ? update.content.text : ""))
    .join("");
}
