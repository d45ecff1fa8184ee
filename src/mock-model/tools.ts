import { type JsonSchema, synthesize, typeOf } from "./schema-value.js";

/** A tool the agent offered the model, whatever the wire format. */
export interface OfferedTool {
  name: string;
  /** Codex groups MCP tools under a namespace (`mcp__<server>`); the call must name it. */
  namespace?: string;
  /** `custom`: a freeform tool taking raw text (codex `apply_patch`); `function`: JSON arguments. */
  kind: "function" | "custom";
  schema: JsonSchema;
  description?: string;
}

// Shell tools as each CLI names them: codex exec_command/shell, claude Bash, opencode/copilot bash, gemini run_shell_command.
const SHELL_NAMES = [
  "exec_command",
  "shell_command",
  "shell",
  "Bash",
  "bash",
  "run_shell_command",
  "run_command",
];
// File-writing tools: codex apply_patch, claude Write, opencode write, gemini write_file, copilot create.
const WRITE_NAMES = ["apply_patch", "Write", "write", "write_file", "create", "create_file"];
/** Tools that only reveal other tools (deferred loading); calling them does not advance a scenario. */
export const META_TOOLS = new Set(["tool_search", "ToolSearch"]);
/** Claude's tool for --json-schema answers. */
export const STRUCTURED_OUTPUT_TOOL = "StructuredOutput";

export function findShellTool(tools: OfferedTool[]): OfferedTool | undefined {
  return findByNames(tools, SHELL_NAMES);
}

export function findWriteTool(tools: OfferedTool[]): OfferedTool | undefined {
  return findByNames(tools, WRITE_NAMES);
}

function findByNames(tools: OfferedTool[], names: string[]): OfferedTool | undefined {
  for (const name of names) {
    const tool = tools.find((t) => t.name === name && !t.namespace);
    if (tool) return tool;
  }
  return undefined;
}

/** A tool whose name contains `fragment` (MCP tools carry per-CLI prefixes: mcp__s__t, s_t, mcp_s_t, s-t). */
export function findToolByFragment(tools: OfferedTool[], fragment: string): OfferedTool | undefined {
  return (
    tools.find((t) => t.name === fragment) ??
    tools.find((t) => t.name.endsWith(fragment) && t.name !== fragment) ??
    tools.find((t) => t.name.includes(fragment))
  );
}

const COMMAND_PROPS = ["cmd", "command", "commandLine", "CommandLine", "script"];
const PATH_PROPS = ["file_path", "filePath", "path", "absolute_path", "TargetFile", "target_file"];
const CONTENT_PROPS = ["content", "file_text", "text", "contents", "CodeContent"];

function properties(schema: JsonSchema): Record<string, JsonSchema> {
  return (schema.properties ?? {}) as Record<string, JsonSchema>;
}

function firstProp(schema: JsonSchema, names: string[]): string | undefined {
  const props = properties(schema);
  return names.find((name) => name in props);
}

/** Arguments for a shell tool, built from its own schema: `cmd` or `command`, string or argv. */
export function shellArguments(tool: OfferedTool, command: string, description?: string): unknown {
  if (tool.kind === "custom") return command;
  const props = properties(tool.schema);
  const key = firstProp(tool.schema, COMMAND_PROPS) ?? "command";
  const overlay: Record<string, unknown> = {};
  overlay[key] = typeOf(props[key] ?? {}) === "array" ? ["bash", "-lc", command] : command;
  if ("description" in props) overlay.description = description ?? `Run ${command}`;
  return synthesize(tool.schema, overlay);
}

/** Arguments for a file-writing tool; codex's freeform apply_patch gets a patch. */
export function writeArguments(tool: OfferedTool, path: string, content: string, cwd?: string): unknown {
  if (tool.kind === "custom" || tool.name === "apply_patch") {
    const lines = content.replace(/\n$/, "").split("\n");
    const patch = `*** Begin Patch\n*** Add File: ${path}\n${lines.map((l) => `+${l}`).join("\n")}\n*** End Patch\n`;
    if (tool.kind === "custom") return patch;
    const key = firstProp(tool.schema, ["input", "patch"]) ?? "input";
    return synthesize(tool.schema, { [key]: patch });
  }
  const pathKey = firstProp(tool.schema, PATH_PROPS) ?? "path";
  const contentKey = firstProp(tool.schema, CONTENT_PROPS) ?? "content";
  const absolute = path.startsWith("/") || !cwd ? path : `${cwd.replace(/\/$/, "")}/${path}`;
  const overlay: Record<string, unknown> = { [pathKey]: wantsAbsolute(tool, pathKey) ? absolute : path };
  overlay[contentKey] = content;
  return synthesize(tool.schema, overlay);
}

function wantsAbsolute(tool: OfferedTool, key: string): boolean {
  const described = `${properties(tool.schema)[key]?.description ?? ""} ${tool.description ?? ""}`;
  return /absolute/i.test(described);
}

/** Arguments for any other tool: the scenario's arguments, completed from the tool's schema. */
export function namedArguments(tool: OfferedTool, wanted: Record<string, unknown>): unknown {
  if (tool.kind === "custom") return typeof wanted.input === "string" ? wanted.input : JSON.stringify(wanted);
  return synthesize(tool.schema, wanted);
}
