/**
 * Synthesise a value that satisfies a JSON Schema (draft 2020-12 / OpenAPI / Gemini's upper-case types),
 * taking what it can from an overlay of wanted values. Used to build tool arguments from a tool's own
 * schema and structured answers (Gemini's router, codex --output-schema, claude StructuredOutput).
 */

export type JsonSchema = Record<string, unknown>;

const MAX_DEPTH = 12;

export function synthesize(schema: unknown, overlay?: unknown, root?: unknown): unknown {
  return valueFor(schema, overlay, (root ?? schema) as JsonSchema, 0);
}

function valueFor(rawSchema: unknown, overlay: unknown, root: JsonSchema, depth: number): unknown {
  if (depth > MAX_DEPTH) return null;
  const schema = resolve(rawSchema, root);
  if (!schema) return overlay ?? null;
  if ("const" in schema) return schema.const;
  // A nullable member nobody asked for stays null (strict schemas make every optional member nullable).
  if (overlay === undefined && allowsNull(schema, root)) return null;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    return schema.enum.includes(overlay) ? overlay : (schema.enum.find((v) => v !== null) ?? schema.enum[0]);
  }
  const union = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (Array.isArray(union) && union.length > 0) {
    const members = union.map((member) => resolve(member, root)).filter(Boolean) as JsonSchema[];
    const matching = overlay === undefined ? undefined : members.find((m) => fits(m, overlay));
    const nonNull = members.find((m) => typeOf(m) !== "null");
    return valueFor(matching ?? nonNull ?? members[0], overlay, root, depth + 1);
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    return valueFor(
      Object.assign({}, ...schema.allOf.map((m) => resolve(m, root) ?? {})),
      overlay,
      root,
      depth,
    );
  }
  const type = typeOf(schema);
  if (
    overlay !== undefined &&
    overlay !== null &&
    fits(schema, overlay) &&
    type !== "object" &&
    type !== "array"
  ) {
    return overlay;
  }
  switch (type) {
    case "object":
      return objectFor(schema, overlay, root, depth);
    case "array": {
      const items = Array.isArray(overlay) ? overlay : [];
      const min = typeof schema.minItems === "number" ? schema.minItems : 0;
      const out = items.map((item) => valueFor(schema.items, item, root, depth + 1));
      while (out.length < min) out.push(valueFor(schema.items, undefined, root, depth + 1));
      return out;
    }
    case "string":
      return typeof schema.default === "string" ? schema.default : "mock";
    case "integer":
    case "number":
      return typeof schema.default === "number"
        ? schema.default
        : typeof schema.minimum === "number"
          ? schema.minimum
          : 0;
    case "boolean":
      return typeof schema.default === "boolean" ? schema.default : false;
    case "null":
      return null;
    default:
      return overlay ?? null;
  }
}

function objectFor(schema: JsonSchema, overlay: unknown, root: JsonSchema, depth: number): unknown {
  const wanted =
    overlay && typeof overlay === "object" && !Array.isArray(overlay) ? (overlay as JsonSchema) : {};
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const out: Record<string, unknown> = {};
  for (const [name, child] of Object.entries(properties)) {
    if (name in wanted) out[name] = valueFor(child, wanted[name], root, depth + 1);
    else if (required.has(name)) out[name] = valueFor(child, undefined, root, depth + 1);
  }
  // Keep wanted members the schema does not list, unless it forbids them.
  if (schema.additionalProperties !== false) {
    for (const [name, value] of Object.entries(wanted)) if (!(name in out)) out[name] = value;
  }
  return out;
}

function resolve(raw: unknown, root: JsonSchema): JsonSchema | undefined {
  if (raw === true) return {};
  if (!raw || typeof raw !== "object") return undefined;
  let schema = raw as JsonSchema;
  for (let hops = 0; typeof schema.$ref === "string" && hops < 8; hops++) {
    const target = pointer(root, schema.$ref as string);
    if (!target) return undefined;
    schema = { ...target, ...withoutRef(schema) };
  }
  return schema;
}

function withoutRef(schema: JsonSchema): JsonSchema {
  const { $ref: _ignored, ...rest } = schema;
  return rest;
}

function pointer(root: JsonSchema, ref: string): JsonSchema | undefined {
  if (!ref.startsWith("#")) return undefined;
  let node: unknown = root;
  for (const part of ref.slice(1).split("/").filter(Boolean)) {
    if (!node || typeof node !== "object") return undefined;
    node = (node as JsonSchema)[part.replace(/~1/g, "/").replace(/~0/g, "~")];
  }
  return node && typeof node === "object" ? (node as JsonSchema) : undefined;
}

/** The schema's type, lower-cased (Gemini sends `OBJECT`), the first non-null one when it lists several. */
export function typeOf(schema: JsonSchema): string | undefined {
  const raw = schema.type;
  const types = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).map((t) =>
    String(t).toLowerCase(),
  );
  const first = types.find((t) => t !== "null") ?? types[0];
  if (first) return first;
  if (schema.properties) return "object";
  if (schema.items) return "array";
  return undefined;
}

function allowsNull(schema: JsonSchema, root: JsonSchema): boolean {
  if (Array.isArray(schema.type) && schema.type.includes("null")) return true;
  const union = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  return Array.isArray(union) && union.some((member) => resolve(member, root)?.type === "null");
}

function fits(schema: JsonSchema, value: unknown): boolean {
  const type = typeOf(schema);
  if (value === null) return type === "null" || (Array.isArray(schema.type) && schema.type.includes("null"));
  switch (type) {
    case "string":
      return typeof value === "string";
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number";
    case "boolean":
      return typeof value === "boolean";
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && !Array.isArray(value);
    default:
      return true;
  }
}
