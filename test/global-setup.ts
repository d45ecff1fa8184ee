import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Every temporary file of a test run — the tests' repositories, and whatever caesar and the agents they
 * start create under $TMPDIR — goes into one directory, removed when the run ends: running the suite
 * leaves nothing in the machine's /tmp. (CAESAR_KEEP_TEST_TMP=1 keeps it, and prints where.)
 */
export default function setup(): () => void {
  const scratch = mkdtempSync(join(tmpdir(), "caesar-tests-"));
  process.env.TMPDIR = scratch;
  return () => {
    if (process.env.CAESAR_KEEP_TEST_TMP === "1") {
      process.stderr.write(`test files kept in ${scratch}\n`);
      return;
    }
    rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
  };
}
