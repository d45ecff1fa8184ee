/**
 * Phase timings for diagnosis and benchmarks: with CAESAR_TRACE=1, `trace("phase")` writes
 * `[trace] <pid> <wall clock, ms mod 100000> +<ms since the process started> <resident MiB> <phase>` to
 * stderr (the wall clock lines up the front end's and the conductor's lines). Reads the environment at
 * each call.
 */
export function trace(phase: string): void {
  const line = traceLine(phase);
  if (line) process.stderr.write(line);
}

/** The line `trace` would write now (undefined unless CAESAR_TRACE=1), for a process that writes it later. */
export function traceLine(phase: string): string | undefined {
  if (process.env.CAESAR_TRACE !== "1") return undefined;
  const now = performance.timeOrigin + performance.now();
  const rss = process.memoryUsage.rss() / 1048576;
  return `[trace] ${process.pid} ${(now % 100000).toFixed(1)} +${performance.now().toFixed(0)} ${rss.toFixed(1)} MiB ${phase}\n`;
}
