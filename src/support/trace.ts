/**
 * Phase timings for diagnosis and benchmarks: with CAESAR_TRACE=1, `trace("phase")` writes
 * `[trace] <pid> <ms since process start> phase` to stderr. Reads the environment at each call.
 */
export function trace(phase: string): void {
  if (process.env.CAESAR_TRACE === "1")
    process.stderr.write(
      `[trace] ${process.pid} ${Date.now() % 100000} (+${performance.now().toFixed(0)}) ${phase}\n`,
    );
}
