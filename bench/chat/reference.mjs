// Finding the reference implementation (chat.py) and the Python that runs it, for bench/chat.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * chat.py from AGENT_CHAT_REFERENCE, else ../shared/reference/agent-chat/chat.py beside the project,
 * and the Python interpreter itself: a version manager's shim (pyenv) costs ≈ 0.5 s a call, which
 * would measure the shim, not the reference.
 */
export function findReference() {
  const fromEnv = process.env.AGENT_CHAT_REFERENCE;
  const script = fromEnv ? resolve(fromEnv) : resolve(PROJECT_ROOT, "../shared/reference/agent-chat/chat.py");
  if (!existsSync(script)) return { missing: `no chat.py at ${script} (set AGENT_CHAT_REFERENCE)` };
  const probe = spawnSync("python3", ["-c", "import sys; print(sys.executable, sys.version.split()[0])"], {
    encoding: "utf8",
  });
  if (probe.status !== 0) return { missing: "python3 is not on the PATH" };
  const [python, version] = probe.stdout.trim().split(" ");
  return { python, version, script, dir: resolve(script, "..") };
}
