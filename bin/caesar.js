#!/usr/bin/env node
// The `caesar` command: the CLI is compiled to dist/ by `npm run build` (run by `npm install` through `prepare`).
import { existsSync } from "node:fs";

const main = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(main)) {
  process.stderr.write(
    "caesar: the CLI is not built (dist/ is missing).\nRun `npm install` (it builds through `prepare`) or `npm run build`, then retry.\n",
  );
  process.exit(1);
}
await import(main.href);
