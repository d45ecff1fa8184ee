import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Context, Hono } from "hono";
import { errnoOf } from "../support/errors.js";
import { WEB_ROOT, WEB_VENDOR_ROOT } from "../support/package-paths.js";
import type { ApiEnv } from "./routes/guards.js";

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
};

/** A file name the dashboard may ask for: no separators, no dots but the extension's. */
const NAME = /^[a-z0-9][a-z0-9-]*\.(html|js|css|svg)$/;

/**
 * The dashboard: `web/` of the package (served as is) and `dist/web/` (the highlighter, bundled for the
 * browser when caesar itself is built). Only plain names under those two folders are served.
 */
export function mountStaticFiles(app: Hono<ApiEnv>): void {
  app.get("/", (c) => serveFile(c, WEB_ROOT, "index.html"));
  app.get("/app/:name", (c) => serveFile(c, WEB_ROOT, c.req.param("name")));
  app.get("/vendor/:name", (c) => serveFile(c, WEB_VENDOR_ROOT, c.req.param("name")));
}

async function serveFile(c: Context<ApiEnv>, folder: string, name: string): Promise<Response> {
  const match = NAME.exec(name);
  if (!match) return c.text("Not found", 404);
  try {
    const body = await readFile(join(folder, name));
    c.header("Content-Type", TYPES[match[1]!]!);
    c.header("Cache-Control", "no-cache");
    return c.body(body);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return c.text("Not found", 404);
    throw error;
  }
}
