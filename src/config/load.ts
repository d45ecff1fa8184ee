import { readFile } from "node:fs/promises";
import { parse as parseToml } from "smol-toml";
import { closestMatch } from "../support/closest.js";
import { errnoOf, UsageError } from "../support/errors.js";
import type * as z from "../support/zod.js";
import { type ConfigFile, ConfigFileSchema } from "./schema.js";

/** Read and validate one configuration file; `undefined` if it does not exist. */
export async function readConfigFile(path: string): Promise<ConfigFile | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return undefined;
    throw error;
  }
  return parseConfigText(text, path);
}

export function parseConfigText(text: string, path: string): ConfigFile {
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch (error) {
    throw new UsageError("config_syntax", `${path} is not valid TOML.`, {
      detail: (error as Error).message,
      cause: error,
    });
  }
  const result = ConfigFileSchema.safeParse(raw);
  if (result.success) {
    refuseDuplicateAgents(result.data, text, path);
    return result.data;
  }
  throw new UsageError("config_invalid", `${path} has ${plural(result.error.issues.length, "error")}.`, {
    detail: result.error.issues.map((issue) => describeConfigIssue(issue, raw)).join("\n"),
  });
}

/**
 * Two `[[agent]]` entries with one id in one file: the second would silently replace the first. Refused,
 * naming both (by line, from the `[[agent]]` headers, when the file uses them).
 */
function refuseDuplicateAgents(file: ConfigFile, text: string, path: string): void {
  const agents = file.agent ?? [];
  const headers = [...text.matchAll(/^[ \t]*\[\[[ \t]*agent[ \t]*\]\]/gm)].map(
    (match) => text.slice(0, match.index).split("\n").length,
  );
  const where = (index: number) =>
    headers.length === agents.length ? `line ${headers[index]}` : `[[agent]] entry ${index + 1}`;
  const first = new Map<string, number>();
  agents.forEach((agent, index) => {
    const earlier = first.get(agent.id);
    if (earlier === undefined) {
      first.set(agent.id, index);
      return;
    }
    throw new UsageError(
      "config_duplicate_agent",
      `${path} declares the agent "${agent.id}" twice: at ${where(earlier)} and at ${where(index)}.`,
      {
        detail: `Only one [[agent]] entry may have id = "${agent.id}" in a file (the second would silently replace the first). Rename one, or remove it. (A more specific layer — config.local.toml over config.toml over your global file — may redeclare an id on purpose: that one wins whole.)`,
      },
    );
  });
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function keyPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out;
}

function describeConfigIssue(issue: z.core.$ZodIssue, raw: unknown): string {
  if (issue.code === "unrecognized_keys") {
    const table = keyPath(issue.path);
    const known = knownKeysAt(issue.path, raw);
    return issue.keys
      .map((key) => {
        const where = table ? `${table}.${key}` : key;
        const hint = closestMatch(key, known);
        return `unknown key "${where}"${hint ? ` — did you mean "${hint}"?` : ""}`;
      })
      .join("\n");
  }
  return `${keyPath(issue.path) || "(top level)"}: ${issue.message}`;
}

/** The valid keys of the table at `path`, read from the schema's shape. */
function knownKeysAt(path: readonly PropertyKey[], _raw: unknown): string[] {
  let schema: unknown = ConfigFileSchema;
  for (const key of path) {
    schema = unwrap(schema);
    const def = defOf(schema);
    if (typeof key === "number") schema = def?.type === "array" ? def.element : undefined;
    else if (typeof key === "string") schema = def?.shape?.[key];
    else schema = undefined;
  }
  const shape = defOf(unwrap(schema))?.shape;
  return shape ? Object.keys(shape) : [];
}

interface SchemaDef {
  type?: string;
  innerType?: unknown;
  element?: unknown;
  shape?: Record<string, unknown>;
}

function defOf(schema: unknown): SchemaDef | undefined {
  return (schema as { _zod?: { def?: SchemaDef } } | undefined)?._zod?.def;
}

/** Look through optional/default/nullable wrappers. */
function unwrap(schema: unknown): unknown {
  let current = schema;
  for (
    let def = defOf(current);
    def && ["optional", "default", "nullable", "prefault"].includes(def.type ?? "");
    def = defOf(current)
  ) {
    current = def.innerType;
  }
  return current;
}
