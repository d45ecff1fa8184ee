import { spawn } from "node:child_process";

/**
 * Open a URL in the user's browser without waiting for it: $BROWSER when set (as Python's webbrowser and
 * Jupyter honour it; `%s` stands for the URL, else the URL is appended), else the platform's opener.
 * Resolves to an error message when nothing could be started — the caller prints the URL anyway.
 */
export function openInBrowser(
  url: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  const [command, ...args] = browserCommand(url, env);
  return new Promise((resolve) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(command!, args, { detached: true, stdio: "ignore", env });
    } catch (error) {
      resolve((error as Error).message);
      return;
    }
    child.once("error", (error) => resolve(`${command}: ${error.message}`));
    child.once("spawn", () => {
      child.unref();
      resolve(undefined);
    });
  });
}

function browserCommand(url: string, env: NodeJS.ProcessEnv): string[] {
  const chosen = env.BROWSER?.split(process.platform === "win32" ? ";" : ":")[0]?.trim();
  if (chosen) {
    const words = chosen.split(/\s+/);
    return words.some((word) => word.includes("%s"))
      ? words.map((word) => word.replaceAll("%s", url))
      : [...words, url];
  }
  if (process.platform === "darwin") return ["open", url];
  if (process.platform === "win32") return ["cmd", "/c", "start", '""', url];
  return ["xdg-open", url];
}
