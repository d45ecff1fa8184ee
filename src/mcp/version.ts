import { readFileSync } from "node:fs";
import { PACKAGE_JSON } from "../support/package-paths.js";

/** caesar's version, announced by both MCP servers. */
export const PACKAGE_VERSION = (JSON.parse(readFileSync(PACKAGE_JSON, "utf8")) as { version: string })
  .version;
