import { execFile } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir, writeFiles } from "../helpers/repo.js";

/**
 * The layer rule `npm run lint` runs on src/ (.dependency-cruiser.cjs): that it says what
 * docs/architecture.md says, covers every folder of src/, and fails on what it forbids — checked on small
 * trees of its own, so that a rule that stopped matching (a renamed folder, a resolver that lost `.js` →
 * `.ts`) shows here rather than as a lint that passes everything.
 */

const PACKAGE = fileURLToPath(new URL("../..", import.meta.url));
const CONFIG = join(PACKAGE, ".dependency-cruiser.cjs");
const DEPCRUISE = join(PACKAGE, "node_modules", "dependency-cruiser", "bin", "dependency-cruise.mjs");

interface Rule {
  name: string;
}
const rules: Rule[] = createRequire(import.meta.url)(CONFIG).forbidden;
const named = (prefix: string) =>
  rules.filter((rule) => rule.name.startsWith(prefix)).map((rule) => rule.name.slice(prefix.length));
const LAYERS = named("layer-");
const ROOMS = named("engine-room-");

describe("the layer rule and docs/architecture.md", () => {
  const doc = readFileSync(join(PACKAGE, "docs", "architecture.md"), "utf8");

  it("lists the layers in the order the page does, and every folder of src/ is one", () => {
    const block = doc.split("## Layers")[1]!.split("```")[1]!;
    const documented = [...block.matchAll(/^([a-z-]+)\/\s/gm)].map((match) => match[1]);
    expect(LAYERS).toEqual(documented);
    const folders = readdirSync(join(PACKAGE, "src"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect([...LAYERS].sort()).toEqual(folders.sort());
  });

  it("lists the engine's rooms in the order the page does, and every folder of src/engine is one", () => {
    const table = doc.split("### The engine's rooms")[1]!.split("\n## ")[0]!;
    const documented = [...table.matchAll(/^\| `([a-z-]+)\/`/gm)].map((match) => match[1]);
    expect(ROOMS).toEqual(documented);
    const folders = readdirSync(join(PACKAGE, "src", "engine"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect([...ROOMS].sort()).toEqual(folders.sort());
  });
});

/** depcruise with the project's rule file over a tree of `files` (TypeScript, NodeNext spelling). */
function cruise(files: Record<string, string>): Promise<{ code: number; output: string }> {
  const dir = tempDir("caesar-layers-");
  writeFiles(dir, files);
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext" } }),
  );
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [DEPCRUISE, "src", "--config", CONFIG, "--output-type", "err"],
      { cwd: dir, env: { ...process.env, NO_COLOR: "1" } },
      (error, stdout, stderr) =>
        resolve({
          code: error ? (typeof error.code === "number" ? error.code : -1) : 0,
          output: `${stdout}${stderr}`,
        }),
    );
  });
}

describe("the layer rule on a tree of its own", () => {
  it("passes imports that go down (types too) or stay inside; fails each that goes up or cannot resolve", async () => {
    const run = await cruise({
      // Allowed: down the layers, down the rooms, the service composing the rooms, a layer inside itself.
      "src/cli/main.ts": 'import { run } from "../engine/lifecycle/start.js";\nrun();\n',
      "src/engine/lifecycle/start.ts":
        'import { read } from "../store/state.js";\nimport type { Id } from "../../protocol/ids.js";\nexport const run = (): Id | undefined => read();\n',
      "src/engine/lifecycle/gc.ts": 'import { read } from "../store/state.js";\nexport const gc = read;\n',
      "src/engine/store/state.ts":
        'import { id } from "../../protocol/ids.js";\nexport const read = () => id;\n',
      "src/engine/service/service.ts": 'import "../race/decide.js";\nimport "../lifecycle/gc.js";\n',
      "src/protocol/ids.ts":
        'import { hex } from "../support/random.js";\nexport type Id = string;\nexport const id = hex;\n',
      "src/support/random.ts":
        'import { seconds } from "./duration.js";\nexport const hex = String(seconds);\n',
      // Forbidden: each of these, and nothing else.
      "src/support/duration.ts":
        'import type { Id } from "../protocol/ids.js";\nexport const seconds: Id = "1";\n',
      "src/protocol/version.ts": 'export { parse } from "../config/load.js";\n',
      "src/config/load.ts": "export const parse = 1;\n",
      "src/engine/store/refusals.ts": 'import { gc } from "../lifecycle/gc.js";\nexport const r = gc;\n',
      "src/engine/race/decide.ts": 'import "../service/service.js";\n',
      "src/chat/clock.ts": 'import "../support/gone.js";\n',
    });
    expect(run.code, run.output).not.toBe(0);
    const violations = [...run.output.matchAll(/^\s*error (\S+: .+)$/gm)].map((match) => match[1]);
    expect(violations.sort()).toEqual(
      [
        "layer-support: src/support/duration.ts → src/protocol/ids.ts",
        "layer-protocol: src/protocol/version.ts → src/config/load.ts",
        "engine-room-store: src/engine/store/refusals.ts → src/engine/lifecycle/gc.ts",
        "engine-room-race: src/engine/race/decide.ts → src/engine/service/service.ts",
        "resolvable: src/chat/clock.ts → ../support/gone.js",
      ].sort(),
    );
  });
});
