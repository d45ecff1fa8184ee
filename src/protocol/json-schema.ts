import * as z from "../support/zod.js";
import { DOCUMENT_SCHEMAS } from "./documents.js";
import { type DocumentKind, PROTOCOLS } from "./versions.js";

type JsonSchema = Record<string, unknown>;

/**
 * The JSON Schema (draft 2020-12) of a document, generated from its zod schema — never written by hand.
 * It describes what a writer may send: members with a default are optional.
 */
export function jsonSchemaFor(kind: DocumentKind, options: { strict?: boolean } = {}): JsonSchema {
  const generated = z.toJSONSchema(DOCUMENT_SCHEMAS[kind], {
    target: "draft-2020-12",
    io: "input",
    unrepresentable: "any",
  }) as JsonSchema;
  const schema: JsonSchema = { ...generated, title: PROTOCOLS[kind] };
  return options.strict ? toStrictSchema(schema) : schema;
}

/**
 * The variant native structured-output modes accept (OpenAI strict mode and the like): every property
 * required, no additional properties, optional members made nullable, no defaults, `anyOf` for unions.
 */
export function toStrictSchema(schema: JsonSchema): JsonSchema {
  return strictNode(schema, false) as JsonSchema;
}

function strictNode(node: unknown, nullable: boolean): unknown {
  if (Array.isArray(node)) return node.map((item) => strictNode(item, false));
  if (!node || typeof node !== "object") return node;
  const source = node as JsonSchema;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === "default") continue;
    if (key === "properties" && value && typeof value === "object") {
      const required = new Set((source.required as string[] | undefined) ?? []);
      const properties: JsonSchema = {};
      for (const [name, child] of Object.entries(value as JsonSchema)) {
        properties[name] = strictNode(child, !required.has(name));
      }
      out.properties = properties;
      out.required = Object.keys(properties);
      out.additionalProperties = false;
      continue;
    }
    if (key === "required" || key === "additionalProperties") continue;
    if (key === "oneOf") {
      out.anyOf = strictNode(value, false);
      continue;
    }
    out[key] = strictNode(value, false);
  }
  if (out.type === "object" && !("properties" in out)) {
    out.properties = {};
    out.required = [];
    out.additionalProperties = false;
  }
  return nullable ? makeNullable(out) : out;
}

function makeNullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === "string") {
    const out: JsonSchema = { ...schema, type: [schema.type, "null"] };
    if (Array.isArray(schema.enum)) out.enum = [...schema.enum, null];
    if ("const" in schema) {
      delete out.const;
      out.enum = [schema.const, null];
    }
    return out;
  }
  if (Array.isArray(schema.anyOf)) {
    const hasNull = schema.anyOf.some((member) => (member as JsonSchema)?.type === "null");
    return hasNull ? schema : { ...schema, anyOf: [...schema.anyOf, { type: "null" }] };
  }
  return { anyOf: [schema, { type: "null" }] };
}
