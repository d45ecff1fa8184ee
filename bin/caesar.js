#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm run build` (run by `npm install` through `prepare`).
// A CommonJS script (bin/package.json says so): `caesar run` and `caesar chat` each load their own
// one-file CommonJS bundle, so neither ever starts Node's ES module loader — a task starts two processes,
// and agents run `caesar chat` once per message. Every other command is ES modules.
"use strict";
const { existsSync } = require("node:fs");
const { join } = require("node:path");
const { pathToFileURL } = require("node:url");

const dist = join(__dirname, "..", "dist");
const own = { run: join(dist, "cli", "run.cjs"), chat: join(dist, "cli", "chat.cjs") }[process.argv[2]];
const main = join(dist, "cli", "main.js");
if (own && existsSync(own)) {
  require(own);
} else if (!existsSync(main)) {
  process.stderr.write(
    "caesar: the CLI is not built (dist/ is missing).\nRun `npm install` (it builds through `prepare`) or `npm run build`, then retry.\n",
  );
  process.exit(1);
} else {
  import(pathToFileURL(main).href);
}
