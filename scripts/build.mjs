#!/usr/bin/env node
// Build caesar into dist/ with esbuild: every command and the agent-chat library as ES modules sharing
// chunks (each command loads only what it imports), the conductor service's entry on its own, and the
// dashboard's syntax highlighter for the browser. Bundling matters: loading a few minified chunks instead of hundreds of modules is most of a
// command's start-up time. Type checking is `npm run typecheck` (tsc); this step only transpiles.
import { rmSync, utimesSync, writeFileSync } from "node:fs";
import { build } from "esbuild";

const started = new Date();
rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true });
// Each output sits two folders below the package root, as support/package-paths.ts expects.
const esm = {
  bundle: true,
  platform: "node",
  target: "node20",
  packages: "bundle",
  minify: true,
  sourcemap: "linked",
  logLevel: "warning",
  format: "esm",
  splitting: true,
  // Some dependencies are CommonJS and call require(): give the ESM bundle one.
  banner: {
    js: "import { createRequire as __caesarCreateRequire } from 'node:module'; const require = __caesarCreateRequire(import.meta.url);",
  },
};
await build({
  ...esm,
  entryPoints: { "cli/main": "src/cli/main.ts", "chat/index": "src/chat/index.ts" },
  outdir: "dist",
  chunkNames: "chunks/[name]-[hash]",
});
// The conductor service's own entry (service-client.ts starts it), bundled on its own: what it loads at
// start is one file, not the dozens of chunks the commands share (each a module to resolve, read and
// link), and only what it imports later (an ACP agent's client, say) is a chunk of its own.
await build({
  ...esm,
  entryPoints: { main: "src/cli/service-main.ts" },
  outdir: "dist/service",
  chunkNames: "[name]-[hash]",
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
// Only a complete build gets its stamp, dated when it started: a source file saved during the build is
// newer than it. The tests rebuild a dist/ whose stamp is missing or older than src/ (test/global-setup.ts).
const stamp = new URL("../dist/build-stamp", import.meta.url);
writeFileSync(stamp, `${started.toISOString()}\n`);
utimesSync(stamp, started, started);
