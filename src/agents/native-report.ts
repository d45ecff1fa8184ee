import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { jsonSchemaFor } from "../protocol/json-schema.js";

/** Largest native output read back (codex `-o`): a report, not a dump. */
const MAX_NATIVE_BYTES = 4 * 1024 * 1024;

/**
 * A raw report from a CLI's native structured output, or undefined when it is not really there (some
 * CLIs exit 0 with plain text where the JSON should be). Null members are dropped: the strict schema
 * makes every optional member nullable, the report schema does not accept null for them.
 */
export function nativeReportFrom(value: unknown): unknown {
  let parsed = value;
  if (typeof value === "string") {
    const text = value.trim();
    if (!text.startsWith("{")) return undefined;
    try {
      parsed = JSON.parse(text);
    } catch {
      return undefined;
    }
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return undefined;
  return withoutNulls(parsed);
}

function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (!value || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    if (member !== null) out[key] = withoutNulls(member);
  }
  return out;
}

/** Read a file a CLI wrote its final message to (codex `-o`); undefined when absent or too large. */
export async function readNativeOutput(path: string): Promise<string | undefined> {
  try {
    const text = await readFile(path, "utf8");
    return text.length > MAX_NATIVE_BYTES ? undefined : text;
  } catch {
    return undefined;
  }
}

/** The report schema a CLI gets for its native structured output, and where it is written. */
export function reportSchemaFile(
  runtimeDir: string,
  variant: "strict" | "plain",
): { path: string; content: string } {
  const schema = jsonSchemaFor("report", { strict: variant === "strict" });
  // Claude's validator rejects the draft 2020-12 meta-schema URI; the schema itself needs nothing newer.
  delete schema.$schema;
  return {
    path: join(runtimeDir, `report.${variant}.schema.json`),
    content: `${JSON.stringify(schema, null, 2)}\n`,
  };
}
