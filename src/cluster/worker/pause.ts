/** Wait `ms`, or less: until any of `signals` aborts. Resolves false when one did. */
export function pauseUnless(ms: number, ...signals: AbortSignal[]): Promise<boolean> {
  if (signals.some((signal) => signal.aborted)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (waited: boolean) => {
      clearTimeout(timer);
      for (const signal of signals) signal.removeEventListener("abort", onAbort);
      resolve(waited);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    for (const signal of signals) signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** `operation`, given at most `ms`: what it resolves with, or undefined when it failed or took longer. */
export async function within<T>(ms: number, operation: Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([operation.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}
