import { CaesarError } from "../support/errors.js";
import { probeBwrap } from "./bwrap.js";

export type SandboxMode = "required" | "auto" | "off";

/** Which sandbox a task's agent runs in, decided before the task exists, and why. */
export interface SandboxDecision {
  backend: "bwrap" | null;
  /** What runs the sandbox, or why there is none. */
  detail: string;
}

/** What this platform's sandbox can be, right now. */
export function platformSandbox(): SandboxDecision {
  if (process.platform === "linux") {
    const probe = probeBwrap();
    return { backend: probe.available ? "bwrap" : null, detail: probe.detail };
  }
  if (process.platform === "darwin")
    return { backend: null, detail: "caesar's macOS sandbox (sandbox-exec) is not built yet" };
  return { backend: null, detail: `caesar has no sandbox for ${process.platform}` };
}

/**
 * The sandbox for a task, from `[sandbox] mode`: `required` refuses before anything starts where none can
 * run (saying what to install), `auto` takes one where the platform has it, `off` never does.
 */
export function decideSandbox(mode: SandboxMode, source: string): SandboxDecision {
  if (mode === "off") return { backend: null, detail: `[sandbox] mode = "off" (${source})` };
  const platform = platformSandbox();
  if (platform.backend || mode === "auto") return platform;
  throw new CaesarError("sandbox_unavailable", `No OS sandbox can run here: ${platform.detail}.`, {
    detail: `[sandbox] mode = "required" (${source}) refuses to run an agent unsandboxed; nothing was started. Install what is missing, or set [sandbox] mode = "auto" to run unsandboxed with a high finding on every task. \`caesar doctor\` shows what the sandbox enforces here.`,
  });
}
