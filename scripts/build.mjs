#!/usr/bin/env node
// Build caesar into dist/ with esbuild: the CLI, `caesar run`'s front end, and the conductor that runs each
// task. Bundling matters: every `caesar run` starts two Node processes, and loading one minified bundle
// instead of hundreds of modules is most of their start-up time. Type checking is
// `npm run typecheck` (tsc); this step only transpiles.
//
// `caesar chat` also gets a CommonJS bundle of its own (dist/cli/chat.cjs, loaded by bin/caesar.js): agents
// start it once per message, and one CommonJS file of the chat command alone starts fastest (bench/chat).
//
// Also bundled, for the browser: the dashboard's syntax highlighter (dist/web/highlight.js), so the web
// page needs no build step on the user's side — web/ itself is served as plain ES modules.
import { rmSync, utimesSync, writeFileSync } from "node:fs";
import { build } from "esbuild";

const started = new Date();
rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true });
const nodeBundle = {
  outdir: "dist",
  bundle: true,
  platform: "node",
  target: "node20",
  packages: "bundle",
  minify: true,
  sourcemap: "linked",
  logLevel: "warning",
};
// The two processes of every `caesar run` — its front end and the conductor — each load ONE CommonJS
// file. Measured (docs/engine.md#performance): Node's ES module loader costs per module (resolve, read,
// compile, link, and V8 optimising the loader's own code), and loading ~40 shared chunks instead of one
// file cost each process ≈ 6 MiB more at its peak; CommonJS spares the loader itself (≈ 2 MiB more).
// Their code is also in the chunks below; no process loads both. package-paths.ts reads import.meta.url,
// which CommonJS spells differently.
await build({
  ...nodeBundle,
  entryPoints: { "cli/run": "src/cli/run/main.ts", "engine/conductor": "src/engine/conductor-main.ts" },
  format: "cjs",
  outExtension: { ".js": ".cjs" },
  define: { "import.meta.url": "__caesarModuleUrl" },
  banner: { js: "const __caesarModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
});
// Every other command, and the agent-chat library (importable by other tools and by test fixtures): ES
// modules sharing chunks, each command loading only what it imports.
// Each output sits two folders below the package root, as support/package-paths.ts expects.
await build({
  ...nodeBundle,
  entryPoints: { "cli/main": "src/cli/main.ts", "chat/index": "src/chat/index.ts" },
  format: "esm",
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
  // Some dependencies are CommonJS and call require(): give the ESM bundle one.
  banner: {
    js: "import { createRequire as __caesarCreateRequire } from 'node:module'; const require = __caesarCreateRequire(import.meta.url);",
  },
});
// commander requires node:child_process at load, for executable subcommands (which caesar never
// declares); loading it costs each `caesar chat` process ≈ 10 ms of CPU. In that bundle it is loaded
// on first use instead.
const lazyChildProcess = {
  name: "lazy-child-process",
  setup(build) {
    build.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
      args.namespace === "lazy"
        ? { path: "node:child_process", external: true }
        : { path: "child_process", namespace: "lazy" },
    );
    build.onLoad({ filter: /.*/, namespace: "lazy" }, () => ({
      contents: 'module.exports = new Proxy({}, { get: (_, key) => require("node:child_process")[key] });',
      loader: "js",
    }));
  },
};
// `caesar chat` alone, as one CommonJS file (see src/cli/chat-main.ts): agents start it once per post.
await build({
  entryPoints: ["src/cli/chat-main.ts"],
  outfile: "dist/cli/chat.cjs",
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  packages: "bundle",
  minify: true,
  sourcemap: "linked",
  logLevel: "warning",
  // package-paths.ts finds the package from its module URL: here, the bundle's own path.
  define: { "import.meta.url": "__caesarChatUrl" },
  banner: { js: 'var __caesarChatUrl = require("node:url").pathToFileURL(__filename).href;' },
  plugins: [lazyChildProcess],
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
