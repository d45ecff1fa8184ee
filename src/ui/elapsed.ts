/**
 * A duration for a screen: `389ms`, `6.2s`, `45s`, `3m59s`, `1h05m`. Always rounded down, so a
 * ticking age never shows `60s` or `3m60s` and a 30-second threshold is not displayed early.
 */
export function formatElapsed(ms: number): string {
  const total = Math.max(0, ms);
  if (total < 1000) return `${Math.floor(total)}ms`;
  if (total < 10_000) return `${(Math.floor(total / 100) / 10).toFixed(1)}s`;
  const seconds = Math.floor(total / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}
