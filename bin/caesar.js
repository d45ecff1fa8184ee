#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm run build` (run by `npm install` through `prepare`).
// CommonJS (bin/package.json): Node starts a CommonJS file faster than an ES module, and `caesar chat`,
// which agents run once per message, then never loads the ES module machinery at all (bench/chat).
"use strict";
const { existsSync } = require("node:fs");
const { join } = require("node:path");
const { pathToFileURL } = require("node:url");

const dist = join(__dirname, "..", "dist");
// `caesar chat` has a bundle of its own (src/cli/chat-main.ts); every other command, the CLI's.
const chat = join(dist, "cli", "chat.cjs");
const main = join(dist, "cli", "main.js");
if (process.argv[2] === "chat" && existsSync(chat)) {
  require(chat);
} else if (!existsSync(main)) {
  process.stderr.write(
    "caesar: the CLI is not built (dist/ is missing).\nRun `npm install` (it builds through `prepare`) or `npm run build`, then retry.\n",
  );
  process.exit(1);
} else {
  import(pathToFileURL(main).href);
}
