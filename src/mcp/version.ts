/** caesar's version, announced by both MCP servers. */
export { PACKAGE_VERSION } from "../support/package-version.js";
