#!/usr/bin/env node
// Build caesar into dist/: two entry points bundled with esbuild (the CLI, and the conductor that runs each
// task), sharing chunks. Bundling matters: every `caesar run` starts two Node processes, and loading one
// minified bundle instead of hundreds of modules is most of their start-up time. Type checking is
// `npm run typecheck` (tsc); this step only transpiles.
//
// `caesar chat` also gets a CommonJS bundle of its own (dist/cli/chat.cjs, loaded by bin/caesar.js): agents
// start it once per message, and one CommonJS file of the chat command alone starts fastest (bench/chat).
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
    "engine/conductor": "src/engine/conductor/main.ts",
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
