/**
 * TOML values for codex `-c key=value` overrides (the value part is parsed as TOML). JSON string
 * escapes are valid TOML basic-string escapes, so strings are written with JSON.stringify.
 */
export function tomlValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return `[${value.map(tomlValue).join(", ")}]`;
  if (value && typeof value === "object") {
    const members = Object.entries(value).map(([key, member]) => `${tomlKey(key)} = ${tomlValue(member)}`);
    return `{ ${members.join(", ")} }`;
  }
  throw new TypeError(`no TOML value for ${String(value)}`);
}

/** A bare key when TOML allows one, else a quoted key. */
export function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
}
