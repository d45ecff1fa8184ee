import { build } from "esbuild";
import { describe, expect, it } from "vitest";

/**
 * What a front end loads before it needs it costs every command its start-up time and memory (bench/run.mjs):
 * a `caesar run` must not load, statically, the ACP SDK (about 12 MiB and 50 ms, needed only when an ACP
 * agent runs), the end of a task (the service's), cancellation (a race's), or the measuring of text for a
 * terminal (string-width: about 4 MiB and 30 ms, for the commands that draw tables). Checked on the bundle's graph
 * as `npm run build` makes it: static imports only, from the CLI's entry and `caesar run`'s module. The
 * conductor service, a process that stays, starts through an entry of its own without the command line
 * (commander and every command's definition: about 7 MiB).
 */
async function staticClosure(entries: string[]): Promise<Set<string>> {
  const result = await build({
    entryPoints: [entries[0]!],
    bundle: true,
    platform: "node",
    format: "esm",
    splitting: true,
    outdir: "/nonexistent",
    metafile: true,
    write: false,
    logLevel: "error",
  });
  const inputs = result.metafile.inputs;
  const seen = new Set<string>(entries);
  const queue = [...entries];
  while (queue.length > 0) {
    for (const imported of inputs[queue.shift()!]?.imports ?? []) {
      if (imported.kind !== "import-statement" || seen.has(imported.path)) continue;
      seen.add(imported.path);
      queue.push(imported.path);
    }
  }
  return seen;
}

describe("what `caesar run` loads before its task starts", () => {
  it("leaves out the ACP SDK, the end of a task, cancellation and the measuring of text", async () => {
    const closure = [...(await staticClosure(["src/cli/main.ts", "src/cli/run/run-task.ts"]))];
    expect(closure).toContain("src/engine/lifecycle/plan.ts");
    for (const library of ["@agentclientprotocol/sdk", "string-width", "wrap-ansi"])
      expect(closure.filter((path) => path.includes(`node_modules/${library}/`))).toEqual([]);
    for (const heavy of [
      "src/engine/conductor/finish.ts",
      "src/engine/lifecycle/cancel.ts",
      "src/engine/conductor/conductor.ts",
    ])
      expect(closure).not.toContain(heavy);
  }, 60_000);
});

describe("what the conductor service loads at its start", () => {
  it("leaves out the command line: commander, the commands' registry and their definitions", async () => {
    const closure = [...(await staticClosure(["src/cli/service-main.ts", "src/cli/service-run.ts"]))];
    expect(closure).toContain("src/config/project-root.ts");
    expect(closure.filter((path) => path.includes("node_modules/commander/"))).toEqual([]);
    expect(closure.filter((path) => path.startsWith("src/cli/commands/"))).toEqual([]);
    for (const cli of ["src/cli/program.ts", "src/cli/registry.ts", "src/cli/main.ts"])
      expect(closure).not.toContain(cli);
  }, 60_000);
});
