import { isAbsolute } from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentAdapter, ChannelServer, CommandLine, ToolLists } from "../../src/agents/adapter.js";
import { BUILTIN_ADAPTERS } from "../../src/agents/catalog.js";
import type { Mode } from "../../src/protocol/task.js";
import { listFixtures, readFixture } from "../helpers/agent-fixtures.js";
import { pairingProblems } from "../helpers/event-checks.js";
import { invalidEvents, replayFixture, scratchLaunch } from "../helpers/replay.js";

/**
 * One contract for every built-in adapter: command lines well-formed for every mode × network × model ×
 * channel, capabilities that the command line really backs, translators that never crash and never lose a
 * tool's end, every recorded fixture translated without loss. Skips say why.
 */

const CHANNEL: ChannelServer = {
  name: "caesar",
  command: "/usr/bin/node",
  args: ["/opt/caesar/bin/caesar.js", "return-channel", "serve", "--task-dir", "/tmp/task-dir-marker"],
  env: { CAESAR_CHANNEL_TASK_DIR: "/tmp/task-dir-marker" },
};
const PROMPT = "-starts with a dash; then 'quotes' and \"double quotes\" and a newline\nend";
const MODEL = "model-marker-7";
const EXTRA = ["--extra-marker", "value with space"];

/** Everything a command line hands the CLI: arguments, environment values, per-run file contents. */
function everything(command: CommandLine): string {
  return [
    ...command.args,
    ...Object.values(command.env),
    ...(command.files ?? []).map((file) => file.content),
    ...(command.links ?? []).map((link) => link.target),
  ].join("\n");
}

/** One scratch directory per adapter, so command lines differ only by what a test varies. */
const bases = new Map<string, { workspace: string; taskDir: string }>();

function build(
  adapter: AgentAdapter,
  options: { mode: Mode; network: boolean; model?: string; channel?: boolean; tools?: ToolLists },
) {
  let base = bases.get(adapter.id);
  if (!base) {
    const first = scratchLaunch(adapter);
    base = { workspace: first.task.workspace, taskDir: first.paths.dir };
    bases.set(adapter.id, base);
  }
  const launch = scratchLaunch(adapter, {
    ...base,
    mode: options.mode,
    network: options.network,
    model: options.model,
    channel: options.channel ? CHANNEL : undefined,
    ...(options.tools ? { tools: options.tools } : {}),
    prompt: PROMPT,
    extraArgs: EXTRA,
  });
  return { launch, command: adapter.buildCommand(launch) };
}

/**
 * Flags that select an OS sandbox for read-only mode, per CLI (verified in the live suite): a
 * capability `readOnly: "os"` must come with one of them.
 */
const OS_READ_ONLY: Record<string, string[][]> = { codex: [["-s", "read-only"]] };

/** What makes write mode run with no prompt, per CLI (measured as root; see docs/adapters.md). */
const NO_PROMPT_WRITE: Record<string, (command: CommandLine) => boolean> = {
  codex: (c) => c.args.includes('approval_policy="never"') && hasPair(c.args, "-s", "workspace-write"),
  claude: (c) => /(^|,)Bash(,|$)/.test(valueAfter(c.args, "--allowedTools") ?? ""),
  opencode: (c) => JSON.parse(c.env.OPENCODE_CONFIG_CONTENT ?? "{}").permission?.bash === "allow",
  gemini: (c) => c.args.includes("--yolo"),
  copilot: (c) => c.args.includes("--allow-all-tools") && !hasPair(c.args, "--deny-tool", "shell"),
  antigravity: (c) => c.args.includes("--dangerously-skip-permissions"),
};

function hasPair(args: string[], flag: string, value: string): boolean {
  return args.some((arg, i) => arg === flag && args[i + 1] === value);
}

function valueAfter(args: string[], flag: string): string | undefined {
  const index = args.indexOf(flag);
  return index === -1 ? undefined : args[index + 1];
}

function sameCommand(a: CommandLine, b: CommandLine): boolean {
  return everything(a) === everything(b) && a.bin === b.bin;
}

const fixtures = listFixtures().map(readFixture);

/** Every capability an adapter declares, and the values it may take (adapter.ts). */
const CAPABILITY_VALUES: Record<string, unknown[]> = {
  network: ["toggle", "write-only", "open", "none"],
  readOnly: ["os", "policy", "none"],
  nativeSchema: [true, false],
  tools: ["allow-and-exclude", "exclude", "none"],
  mcp: [true, false],
  resume: [true, false],
  model: [true, false],
};
/** The values that claim caesar controls something. */
const CLAIMS: Record<string, unknown[]> = {
  network: ["toggle", "write-only"],
  readOnly: ["os", "policy"],
  nativeSchema: [true],
  tools: ["allow-and-exclude", "exclude"],
  mcp: [true],
  resume: [true],
  model: [true],
};

describe.each(BUILTIN_ADAPTERS.map((adapter) => [adapter.id, adapter] as const))(
  "adapter contract: %s",
  (_id, adapter) => {
    const caps = adapter.capabilities;

    it("declares every capability with a reason, and where it was verified", () => {
      for (const [name, allowed] of Object.entries(CAPABILITY_VALUES)) {
        const capability = (caps as unknown as Record<string, { value: unknown; why: string } | undefined>)[
          name
        ];
        expect(capability, `capability ${name}`).toBeDefined();
        expect(allowed, `${name}: ${String(capability!.value)}`).toContain(capability!.value);
        // A reason is something someone can act on (a flag, a fact), not one word or a placeholder.
        const why = capability!.why.trim();
        expect(why.split(/\s+/).length, `${name}: "${why}"`).toBeGreaterThanOrEqual(2);
        expect(why.toLowerCase(), name).not.toMatch(/^(todo|tbd|n\/a|unknown|none|yes|no|true|false)\W*$/);
        expect(why.toLowerCase(), name).not.toMatch(/\b(todo|tbd|fixme|xxx)\b/);
        // Principle 5: an adapter nobody could run never claims control it has not shown.
        if (caps.unverified && CLAIMS[name]?.includes(capability!.value))
          expect(why, `${name} claims ${String(capability!.value)} unverified`).toMatch(/^unverified\b/);
      }
      if (caps.unverified) expect(caps.verifiedOn).toBeUndefined();
      else {
        expect(caps.verifiedOn).toMatch(/^\d+\.\d+\.\d+$/);
        expect(caps.verifiedRange?.min).toBe(caps.verifiedOn);
      }
      expect(adapter.kind).toBe("builtin");
    });

    const combos: { mode: Mode; network: boolean; model?: string; channel: boolean }[] = [];
    for (const mode of ["read-only", "write"] as Mode[])
      for (const network of [true, false])
        for (const model of [undefined, MODEL])
          for (const channel of [false, true]) combos.push({ mode, network, model, channel });

    it.each(combos)("builds a well-formed command line: %o", (combo) => {
      const { launch, command } = build(adapter, combo);
      expect(command.bin).toMatch(/^[\w.-]+$/);
      expect(command.cwd).toBe(launch.task.workspace);
      for (const arg of command.args) {
        expect(typeof arg).toBe("string");
        expect(arg).not.toMatch(/^(undefined|null|\[object Object\])$/);
      }
      // The brief travels once, intact, and last (after `--`, or as the value of the prompt option).
      const carriers = command.args.filter((arg) => arg === PROMPT || arg.endsWith(`=${PROMPT}`));
      expect(carriers).toHaveLength(1);
      const promptIndex = command.args.findIndex((arg) => arg === PROMPT || arg.endsWith(`=${PROMPT}`));
      expect(promptIndex).toBe(command.args.length - 1);
      // The user's extra arguments pass verbatim, before the prompt.
      const extraAt = command.args.indexOf(EXTRA[0]!);
      expect(extraAt).toBeGreaterThan(-1);
      expect(command.args[extraAt + 1]).toBe(EXTRA[1]);
      expect(extraAt).toBeLessThan(promptIndex);
      for (const value of Object.values(command.env)) expect(typeof value).toBe("string");
      for (const file of command.files ?? []) {
        expect(isAbsolute(file.path)).toBe(true);
        expect(file.path.startsWith(launch.runtimeDir) || file.path.startsWith(launch.paths.dir)).toBe(true);
      }
      for (const link of command.links ?? []) expect(link.path.startsWith(launch.runtimeDir)).toBe(true);
      // The shown command is one readable line, never the whole brief.
      expect(command.display).toContain(command.bin);
      expect(command.display).not.toContain("\n");
      expect(command.display.length).toBeLessThan(4000);
    });

    it("model selection: in the command line exactly when the capability says so", () => {
      const withModel = build(adapter, { mode: "write", network: true, model: MODEL }).command;
      const without = build(adapter, { mode: "write", network: true }).command;
      expect(everything(withModel).includes(MODEL)).toBe(caps.model.value);
      expect(everything(without).includes(MODEL)).toBe(false);
    });

    it("network control: the command line changes with the network exactly where the capability says", () => {
      for (const mode of ["read-only", "write"] as Mode[]) {
        const on = build(adapter, { mode, network: true }).command;
        const off = build(adapter, { mode, network: false }).command;
        const controllable =
          caps.network.value === "toggle" || (caps.network.value === "write-only" && mode === "write");
        expect(!sameCommand(on, off), `${mode}`).toBe(controllable);
      }
    });

    it("tool control: the tool lists reach the command line exactly where the capability says", () => {
      const plain = build(adapter, { mode: "write", network: true }).command;
      const excluded = build(adapter, {
        mode: "write",
        network: true,
        tools: { allowed: null, excluded: ["ToolX9"] },
      }).command;
      const allowed = build(adapter, {
        mode: "write",
        network: true,
        tools: { allowed: ["ToolY9"], excluded: [] },
      }).command;
      expect(everything(plain)).not.toContain("ToolX9");
      expect(everything(excluded).includes("ToolX9")).toBe(caps.tools.value !== "none");
      expect(everything(allowed).includes("ToolY9")).toBe(caps.tools.value === "allow-and-exclude");
    });

    it("read-only: a different command line; an OS sandbox only where its flags select one", () => {
      const readOnly = build(adapter, { mode: "read-only", network: true }).command;
      const write = build(adapter, { mode: "write", network: true }).command;
      if (caps.readOnly.value === "none") {
        expect(NO_PROMPT_WRITE[adapter.id]?.(readOnly)).toBe(false);
        return;
      }
      expect(sameCommand(readOnly, write)).toBe(false);
      const sandboxes = OS_READ_ONLY[adapter.id] ?? [];
      const selectsSandbox = sandboxes.some(([flag, value]) => hasPair(readOnly.args, flag!, value!));
      expect(selectsSandbox).toBe(caps.readOnly.value === "os");
      // Read-only never carries the write-mode approvals.
      expect(NO_PROMPT_WRITE[adapter.id]?.(readOnly)).toBe(false);
    });

    it("write mode: no prompt, and no bypass flag that is refused as root", () => {
      const write = build(adapter, { mode: "write", network: true }).command;
      expect(NO_PROMPT_WRITE[adapter.id]?.(write)).toBe(true);
      if (adapter.id === "claude") expect(write.args).not.toContain("--dangerously-skip-permissions");
    });

    it("native schema: a report schema is handed to the CLI exactly when declared", () => {
      const { command } = build(adapter, { mode: "write", network: true });
      const schemas = (command.files ?? []).filter((file) => file.path.endsWith(".schema.json"));
      const inline = command.args.some((arg) => arg.includes('"caesar.report/v1"'));
      expect(schemas.length > 0 || inline).toBe(caps.nativeSchema.value);
      for (const schema of schemas) {
        expect(JSON.parse(schema.content).properties.protocol).toBeDefined();
        expect(command.args).toContain(schema.path);
      }
    });

    it("return channel: loaded for this run when declared, the task dir in the server's args or env", () => {
      const plain = build(adapter, { mode: "write", network: true }).command;
      const withChannel = build(adapter, { mode: "write", network: true, channel: true }).command;
      if (!caps.mcp.value) {
        expect(sameCommand(plain, withChannel)).toBe(true);
        return;
      }
      const text = everything(withChannel);
      expect(text).toContain(CHANNEL.command);
      expect(text).toContain("/tmp/task-dir-marker");
      expect(everything(plain)).not.toContain("/tmp/task-dir-marker");
    });

    it("translates hostile and unknown lines without crashing, with valid events only", async () => {
      const launch = scratchLaunch(adapter);
      const translator = adapter.createTranslator(launch);
      const hostile = [
        "",
        "not json",
        "[1,2,3]",
        "null",
        "42",
        '{"type":null}',
        '{"type":"item.completed","item":null}',
        '{"type":"item.completed","item":{"type":"command_execution","id":7,"exit_code":"x"}}',
        '{"type":"assistant","message":{"content":"not a list"}}',
        '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":{"a":1}}]}}',
        '{"type":"tool_use","part":{"state":{"status":"completed"}}}',
        '{"type":"tool_result","tool_id":null,"status":"error","error":"x"}',
        '{"type":"tool.execution_complete","data":{"toolCallId":5,"success":"yes"}}',
        '{"type":"result","usage":"lots","stats":[],"is_error":true,"result":{"x":1}}',
        '{"type":"step_update","tool_info":{"name":7},"status":{}}',
        `{"type":"message","role":"assistant","content":"${"x".repeat(200_000)}"}`,
        '{"type":"error","message":"\\u0000\\u001b[31mred"}',
        '{"type":"brand.new.event","data":{"whatever":true}}',
      ];
      const events = hostile.flatMap((line) => translator.stdout(line));
      events.push(...hostile.flatMap((line) => translator.stderr?.(line) ?? []));
      const outcome = await translator.finish({ code: 1, signal: null });
      events.push(...(outcome.events ?? []));
      expect(invalidEvents(events)).toEqual([]);
      expect(pairingProblems(events)).toEqual([]);
      expect(outcome.failure).toBeDefined();
    });

    const own = fixtures.filter((fixture) => fixture.header.cli === adapter.id);
    if (own.length === 0) {
      it.skip(
        caps.unverified
          ? "fixtures: none can be recorded (no binary can run here; the adapter is unverified)"
          : "fixtures: none recorded yet (run the live suite with the CLIs installed)",
        () => {},
      );
      return;
    }

    it.each(own.map((fixture) => [`${fixture.header.version}/${fixture.header.case}`, fixture] as const))(
      "translates fixture %s without loss",
      async (_name, fixture) => {
        const replay = await replayFixture(adapter, fixture);
        expect(invalidEvents(replay.events)).toEqual([]);
        expect(pairingProblems(replay.events)).toEqual([]);
      },
    );

    it("survives every recorded line with its values swapped for other types", async () => {
      const translator = adapter.createTranslator(scratchLaunch(adapter));
      const events = [];
      for (const fixture of own) {
        for (const { line } of fixture.lines) {
          let value: unknown;
          try {
            value = JSON.parse(line);
          } catch {
            continue;
          }
          for (const variant of mutations(value)) events.push(...translator.stdout(JSON.stringify(variant)));
        }
      }
      const outcome = await translator.finish({ code: 0, signal: null });
      events.push(...(outcome.events ?? []));
      expect(invalidEvents(events)).toEqual([]);
    });
  },
);

/** Copies of a value with one member at a time replaced by a value of another type (at most 60 per line). */
function mutations(value: unknown): unknown[] {
  const out: unknown[] = [];
  const replacements = [null, 7, "s", [], {}];
  const visit = (node: unknown, path: (string | number)[]) => {
    if (out.length >= 60 || !node || typeof node !== "object") return;
    for (const [key, child] of Object.entries(node)) {
      for (const replacement of replacements) {
        if (out.length >= 60) return;
        const copy = structuredClone(value);
        let target = copy as Record<string, unknown>;
        for (const step of path) target = target[step] as Record<string, unknown>;
        target[key] = replacement;
        out.push(copy);
      }
      visit(child, [...path, key]);
    }
  };
  visit(value, []);
  return out;
}
