#!/usr/bin/env node
// Build caesar into dist/: two entry points bundled with esbuild (the CLI, and the conductor that runs each
// task), sharing chunks. Bundling matters: every `caesar run` starts two Node processes, and loading one
// minified bundle instead of hundreds of modules is most of their start-up time. Type checking is
// `npm run typecheck` (tsc); this step only transpiles.
import { rmSync } from "node:fs";
import { build } from "esbuild";

rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true });
await build({
  // The CLI, the conductor, and the agent-chat library (importable by other tools and by test fixtures).
  entryPoints: ["src/cli/main.ts", "src/engine/conductor-main.ts", "src/chat/index.ts"],
  outbase: "src",
  outdir: "dist",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "bundle",
  minify: true,
  sourcemap: "linked",
  chunkNames: "chunks/[name]-[hash]",
  logLevel: "warning",
  // Some dependencies are CommonJS and call require(): give the ESM bundle one.
  banner: {
    js: "import { createRequire as __caesarCreateRequire } from 'node:module'; const require = __caesarCreateRequire(import.meta.url);",
  },
});
