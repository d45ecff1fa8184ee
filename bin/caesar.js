#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm run build` (run by `npm install` through `prepare`).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

// `caesar chat` has a bundle of its own (src/cli/chat-main.ts); bin/caesar starts it directly.
const chat = new URL("../dist/cli/chat.cjs", import.meta.url);
const entry =
  process.argv[2] === "chat" && existsSync(fileURLToPath(chat))
    ? chat
    : new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write(
    "caesar: the CLI is not built (dist/ is missing).\nRun `npm install` (it builds through `prepare`) or `npm run build`, then retry.\n",
  );
  process.exit(1);
}
await import(entry.href);
