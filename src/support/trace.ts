/**
 * Phase timings for diagnosis and benchmarks: with CAESAR_TRACE=1, `trace("phase")` writes
 * `[trace] <pid> <ms since process start> phase` to stderr. Free when off.
 */
const enabled = process.env.CAESAR_TRACE === "1";

export function trace(phase: string): void {
  if (enabled)
    process.stderr.write(
      `[trace] ${process.pid} ${Date.now() % 100000} (+${performance.now().toFixed(0)}) ${phase}\n`,
    );
}
