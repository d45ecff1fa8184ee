import { spawnSync } from "node:child_process";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ERRORS, type ErrorEntry, isErrorCode } from "../../src/support/error-catalogue.js";
import { type CodeUse, readSources, scanErrorCodes } from "../helpers/error-code-scan.js";
import { tempDir } from "../helpers/repo.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const SCRIPT = join(REPO, "scripts", "errors-doc.mjs");
const CATALOGUE_FILE = join("src", "support", "error-catalogue.ts");

/**
 * Strings in an error code's place that are not codes users get: other programs' codes, compared or passed
 * on where caesar reads them, and the codes of a protocol between caesar's own processes. Node's errno codes (`ENOENT`) are upper case, unlike any of caesar's, and
 * are left out by their shape.
 */
const FOREIGN: readonly { file: string; code: string; why: string }[] = [
  { file: "src/agents/copilot.ts", code: "denied", why: "copilot's tool result code" },
  { file: "src/api/envelope.ts", code: "unrecognized_keys", why: "a zod issue code" },
  { file: "src/config/load.ts", code: "unrecognized_keys", why: "a zod issue code" },
  { file: "src/engine/follow/await-tasks.ts", code: "custom", why: "a zod issue code" },
  { file: "src/engine/lifecycle/request.ts", code: "unrecognized_keys", why: "a zod issue code" },
  { file: "src/protocol/documents.ts", code: "invalid_value", why: "a zod issue code" },
  { file: "src/protocol/documents.ts", code: "invalid_union", why: "a zod issue code" },
  // The conductor service's answers on its local socket, read by caesar alone: a refusal reaches users as
  // service_refused, the service's words in its summary.
  { file: "src/engine/service/service.ts", code: "invalid_request", why: "the service protocol's" },
  { file: "src/engine/service/service.ts", code: "service_error", why: "the service protocol's" },
  { file: "src/engine/service/service.ts", code: "service_stopping", why: "the service protocol's" },
];
/** The mock model answers as model providers do, with their error codes (`rate_limit_exceeded`…). */
const FOREIGN_DIRECTORY = "src/mock-model/";

function isForeign(use: CodeUse): boolean {
  return (
    /^[A-Z0-9_]+$/.test(use.code) ||
    use.file.startsWith(FOREIGN_DIRECTORY) ||
    FOREIGN.some((foreign) => foreign.file === use.file && foreign.code === use.code)
  );
}

function uncatalogued(uses: readonly CodeUse[]): string[] {
  return uses
    .filter((use) => !isErrorCode(use.code) && !isForeign(use))
    .map((use) => `${use.file}:${use.line}: ${JSON.stringify(use.code)} (${use.how})`);
}

function runScript(...args: string[]) {
  return spawnSync(process.execPath, [SCRIPT, ...args], { cwd: REPO, encoding: "utf8" });
}

describe("the error catalogue", () => {
  const sources = readSources(join(REPO, "src"), REPO);
  const uses = scanErrorCodes(sources);

  it("has every code written in src/ in an error code's place", () => {
    // The type check refuses `new CaesarError("uncatalogued", …)`; this finds the codes written as data:
    // a task's `error`, an `error` event, a refusal record, a comparison, a set of codes.
    expect(uncatalogued(uses)).toEqual([]);
    // The scan reads the shapes these are written in (a sanity check that it still finds them).
    expect(uses).toContainEqual(
      expect.objectContaining({ code: "records_rewritten", file: "src/engine/store/task-store.ts" }),
    );
    expect(uses).toContainEqual(
      expect.objectContaining({ code: "agent_failed", file: "src/engine/conductor/ending.ts" }),
    );
    expect(uses).toContainEqual(
      expect.objectContaining({ code: "refused_by_worker", file: "src/cluster/worker/admit.ts" }),
    );
  });

  it("lists no foreign code that src/ no longer has", () => {
    for (const foreign of FOREIGN)
      expect(uses, `${foreign.file}: ${foreign.code}`).toContainEqual(
        expect.objectContaining({ file: foreign.file, code: foreign.code }),
      );
  });

  it("has no code that src/ never gives", () => {
    const text = [...sources].filter(([file]) => file !== CATALOGUE_FILE).map(([, content]) => content);
    const all = text.join("\n");
    const unused = Object.keys(ERRORS).filter((code) => !all.includes(`"${code}"`));
    expect(unused).toEqual([]);
  });

  it("is consistent: snake-case codes, a status for every code thrown, governance only for refusals", () => {
    for (const [code, entry] of Object.entries(ERRORS) as [string, ErrorEntry][]) {
      expect(code).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
      // A code with an HTTP status can be thrown, so a command can fail with it.
      if (entry.http !== null) expect(entry.exit, code).not.toBeNull();
      if (code.endsWith("_not_found") && entry.http !== null) expect(entry.http, code).toBe(404);
      if (entry.governance) expect(entry.area, code).toBe("policy");
    }
  });
});

describe("the scan for error codes", () => {
  it("finds a code that is not in the catalogue, in every shape it reads", () => {
    // The same shapes as src/ has, each with a code no catalogue has: each must be reported, or the
    // test above could never fail.
    const source = `
      class CaesarError extends Error {
        constructor(code: string, summary: string) { super(summary); }
      }
      class Stream { errorEvent(message: string, code?: string) { return [message, code]; } }
      function failure(context: unknown, code: string) { return { context, code }; }
      const GOVERNED = new Set(["bogus_in_a_set"]);
      type BogusCode = "bogus_type_alias" | "task_not_found";
      interface Body { code: "bogus_property_type" }
      export function all(error: { code: string }, stream: Stream, yes: boolean) {
        const event = { type: "error", code: "bogus_property" };
        const other = { code: yes ? "bogus_conditional" : "task_not_found" };
        if (error.code === "bogus_comparison") return [event, other];
        switch (error.code) { case "bogus_case": break; }
        if (GOVERNED.has(error.code)) return;
        failure(null, "bogus_function_argument");
        stream.errorEvent("message", "bogus_method_argument");
        const code = error.code ? "task_not_found" : "bogus_variable";
        throw new CaesarError("bogus_constructor_argument", code);
      }
    `;
    const found = scanErrorCodes(new Map([["src/shapes.ts", source]]));
    expect(new Set(uncatalogued(found).map((line) => line.split('"')[1]))).toEqual(
      new Set([
        "bogus_in_a_set",
        "bogus_type_alias",
        "bogus_property_type",
        "bogus_property",
        "bogus_conditional",
        "bogus_comparison",
        "bogus_case",
        "bogus_function_argument",
        "bogus_method_argument",
        "bogus_variable",
        "bogus_constructor_argument",
      ]),
    );
    // And what is catalogued passes.
    expect(found.filter((use) => use.code === "task_not_found")).toHaveLength(3);
  });
});

describe("docs/errors.md", () => {
  it("is what scripts/errors-doc.mjs generates from the catalogue", () => {
    const check = runScript("--check");
    expect(check.stderr).toBe("");
    expect(check.status).toBe(0);
  });

  it("says what the catalogue says, for every code", () => {
    const doc = readFileSync(join(REPO, "docs", "errors.md"), "utf8");
    const rows = new Map(
      [...doc.matchAll(/^\| `([a-z0-9_]+)` +\| (\S+) +\| (\S+) +\| (.+?) +\|$/gm)].map((row) => [
        row[1],
        { exit: row[2], http: row[3], doc: row[4] },
      ]),
    );
    for (const [code, entry] of Object.entries(ERRORS) as [string, ErrorEntry][]) {
      expect(rows.get(code), code).toMatchObject({
        exit: entry.exit === null ? "—" : String(entry.exit),
        http: entry.http === null ? "—" : String(entry.http),
      });
    }
    expect(rows.size).toBe(Object.keys(ERRORS).length);
  });

  it("the check fails on a stale copy, and names the remedy", () => {
    const stale = join(tempDir("caesar-errors-doc-"), "errors.md");
    copyFileSync(join(REPO, "docs", "errors.md"), stale);
    expect(runScript("--check", "--doc", stale).status).toBe(0);
    writeFileSync(stale, readFileSync(stale, "utf8").replace("| `task_not_found` ", "| `task_gone`      "));
    const check = runScript("--check", "--doc", stale);
    expect(check.status).toBe(1);
    expect(check.stderr).toContain("npm run docs:errors");
  });
});
