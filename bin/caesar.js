#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm run build` (run by `npm install` through `prepare`).
// A CommonJS script (bin/package.json says so): `caesar run` loads its own one-file CommonJS bundle, and
// its front end then never starts Node's ES module loader. Every other command is ES modules.
const { existsSync } = require("node:fs");
const { join } = require("node:path");
const { pathToFileURL } = require("node:url");

const run = process.argv[2] === "run";
const entry = join(__dirname, "..", "dist", "cli", run ? "run.cjs" : "main.js");
if (!existsSync(entry)) {
  process.stderr.write(
    "caesar: the CLI is not built (dist/ is missing).\nRun `npm install` (it builds through `prepare`) or `npm run build`, then retry.\n",
  );
  process.exit(1);
}
if (run) require(entry);
else import(pathToFileURL(entry).href);
