import { fileURLToPath } from "node:url";

/**
 * Paths inside the installed caesar package. Every module that computes them sits two folders below the
 * package root — `src/<layer>/<file>.ts` in development, `dist/<folder>/<bundle>.js` once built — so one
 * relative URL serves both.
 */
const ROOT_URL = new URL("../../", import.meta.url);

export const PACKAGE_ROOT = fileURLToPath(ROOT_URL);
export const PACKAGE_JSON = fileURLToPath(new URL("package.json", ROOT_URL));
/** The `caesar` executable (a node script). */
export const CAESAR_BIN = fileURLToPath(new URL("bin/caesar.js", ROOT_URL));
/** The conductor service's own entry (src/cli/service-main.ts, built): front ends start it detached. */
export const SERVICE_MAIN = fileURLToPath(new URL("dist/service/main.js", ROOT_URL));
/** The bundled reference agent. */
export const REFERENCE_AGENT_SCRIPT = fileURLToPath(new URL("agents/reference-agent.mjs", ROOT_URL));
/** The dashboard's static files (plain ES modules, HTML and CSS: no build step on the user's side). */
export const WEB_ROOT = fileURLToPath(new URL("web/", ROOT_URL));
/** Browser bundles of third-party code the dashboard uses (syntax highlighting), built into dist/. */
export const WEB_VENDOR_ROOT = fileURLToPath(new URL("dist/web/", ROOT_URL));
