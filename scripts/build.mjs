#!/usr/bin/env node
// Build caesar into dist/: two entry points bundled with esbuild (the CLI, and the conductor that runs each
// task), sharing chunks. Bundling matters: every `caesar run` starts two Node processes, and loading one
// minified bundle instead of hundreds of modules is most of their start-up time. Type checking is
// `npm run typecheck` (tsc); this step only transpiles.
//
// Also bundled, for the browser: the dashboard's syntax highlighter (dist/web/highlight.js), so the web
// page needs no build step on the user's side — web/ itself is served as plain ES modules.
import { rmSync } from "node:fs";
import { build } from "esbuild";

rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true });
await build({
  // The CLI, the conductor, and the agent-chat library (importable by other tools and by test fixtures).
  // Each output sits two folders below the package root, as support/package-paths.ts expects.
  entryPoints: {
    "cli/main": "src/cli/main.ts",
    "engine/conductor": "src/engine/conductor-main.ts",
    "chat/index": "src/chat/index.ts",
  },
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
await build({
  entryPoints: { highlight: "scripts/highlight-entry.mjs" },
  outdir: "dist/web",
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  minify: true,
  legalComments: "eof",
  logLevel: "warning",
});
