import { readFileSync } from "node:fs";
import { PACKAGE_JSON } from "./package-paths.js";

/** caesar's version, announced by its servers (MCP, ACP) and its ACP client. */
export const PACKAGE_VERSION = (JSON.parse(readFileSync(PACKAGE_JSON, "utf8")) as { version: string })
  .version;
