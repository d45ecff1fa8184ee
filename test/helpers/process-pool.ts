import { type ChildProcess, spawn } from "node:child_process";

/** A pid that is certainly not running: a child that has exited and been reaped. */
export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
  await new Promise((resolve) => child.on("close", resolve));
  return child.pid!;
}

/**
 * The node processes a stress test starts, SIGKILLs and replaces: which still run, how many ended on
 * their own, and, once all have ended, which failed (an exit other than 0 or a SIGKILL, with its stderr).
 */
export class ProcessPool {
  readonly live = new Map<string, ChildProcess>();
  /** How many exited with 0. */
  finished = 0;
  private readonly exits: Promise<string | undefined>[] = [];
  private next = 0;

  constructor(
    private readonly name: string,
    private readonly argsOf: (id: string) => string[],
  ) {}

  /** Start one more (`<name><n>`, given to argsOf). */
  start(): string {
    const id = `${this.name}${this.next++}`;
    const child = spawn(process.execPath, this.argsOf(id), { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (chunk) => {
      stderr += chunk;
    });
    this.live.set(id, child);
    this.exits.push(
      new Promise((resolve) =>
        child.on("close", (code, signal) => {
          this.live.delete(id);
          if (code === 0) this.finished += 1;
          resolve(code === 0 || signal === "SIGKILL" ? undefined : `${id} exited ${code}: ${stderr}`);
        }),
      ),
    );
    return id;
  }

  /** Once every process started (replacements included) has ended: the failures. */
  async failures(): Promise<string[]> {
    const ended: (string | undefined)[] = [];
    while (ended.length < this.exits.length)
      ended.push(...(await Promise.all(this.exits.slice(ended.length))));
    return ended.filter((failure): failure is string => failure !== undefined);
  }
}
