import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { git } from "../helpers/repo.js";
import { itWith } from "../helpers/system-deps.js";
import { BUBBLEWRAP, project, run } from "./probe-project.js";

// `git commit` in a sandboxed worktree task: the agent's objects go to a folder of its own, caesar adopts
// them (validated) after the run; the project's refs and object store stay out of its reach.

const COMMIT = [
  `echo committed > feature.txt`,
  `git add feature.txt && git -c user.email=a@example.com -c user.name=agent commit -qm "agent's commit" && echo "COMMITTED $(git rev-parse HEAD)" || echo COMMIT-FAILED`,
].join("\n");

/** What the agent tries against the project's own git, with and without the variables caesar gives it. */
const ATTACKS = [
  `COMMON=$(git rev-parse --path-format=absolute --git-common-dir)`,
  `git update-ref refs/heads/main HEAD 2>/dev/null && echo MOVED-MAIN || echo MAIN-REFUSED`,
  `env -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES git update-ref refs/heads/main HEAD 2>/dev/null && echo MOVED-MAIN || echo MAIN-REFUSED`,
  `(echo x > "$COMMON/objects/pwned") 2>/dev/null && echo WROTE-OBJECTS || echo OBJECTS-REFUSED`,
  `(echo x > "$COMMON/worktrees/$(basename "$PWD")/commondir") 2>/dev/null && echo WROTE-COMMONDIR || echo COMMONDIR-REFUSED`,
  `echo more > more.txt; git add more.txt; env -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES git -c user.email=a@example.com -c user.name=agent commit -qm more 2>/dev/null && echo COMMITTED-TO-COMMON || echo COMMON-COMMIT-REFUSED`,
].join("\n");

describe("git commit in a sandboxed worktree task", () => {
  itWith(
    BUBBLEWRAP,
    "the agent commits; caesar adopts the commit, reports and applies it; main and the store stay out of reach",
    async () => {
      const root = project(`${COMMIT}\n${ATTACKS}`, "required");
      const main = git(root, "rev-parse", "main");
      const result = await run(root, ["--mode", "write"]);
      expect(result.state.outcome).toBe("succeeded");
      const committed = /COMMITTED ([0-9a-f]{40})/.exec(result.raw);
      expect(committed, result.raw).not.toBeNull();
      for (const refused of ["MAIN-REFUSED", "OBJECTS-REFUSED", "COMMONDIR-REFUSED", "COMMON-COMMIT-REFUSED"])
        expect(result.raw).toContain(refused);
      expect(result.raw).not.toMatch(/MOVED-MAIN|WROTE-OBJECTS|WROTE-COMMONDIR|COMMITTED-TO-COMMON/);
      expect(git(root, "rev-parse", "main")).toBe(main);
      expect(existsSync(join(root, ".git", "objects", "pwned"))).toBe(false);
      // Adopted: the agent's commit is in the project's store, its branch on it.
      expect(git(root, "cat-file", "-t", committed![1]!)).toBe("commit");
      expect(git(root, "log", "--format=%s", "-1", committed![1]!)).toBe("agent's commit");
      const paths = result.state.report.changes.map((change) => change.path).sort();
      expect(paths).toEqual(["feature.txt", "more.txt"]);
      const applied = await runCaesar(["apply", result.task_id, "--json"], { cwd: root, timeoutMs: 60_000 });
      expect(parseJsonOutput<{ files: string[] }>(applied).files.sort()).toEqual(["feature.txt", "more.txt"]);
      expect(readFileSync(join(root, "feature.txt"), "utf8")).toBe("committed\n");
    },
  );

  itWith(
    BUBBLEWRAP,
    "objects the agent planted (another store named as alternates) are refused, its files still observed",
    async () => {
      const script = `${COMMIT}\nmkdir -p "$GIT_OBJECT_DIRECTORY/info" && echo /etc > "$GIT_OBJECT_DIRECTORY/info/alternates"`;
      const root = project(script, "required");
      const result = await run(root, ["--mode", "write"]);
      expect(result.raw).toMatch(/COMMITTED [0-9a-f]{40}/);
      expect(result.state.report.findings.map((finding) => finding.title)).toContain(
        "The agent's git commits were not adopted",
      );
      expect(result.state.report.changes.map((change) => change.path)).toEqual(["feature.txt"]);
      const committed = /COMMITTED ([0-9a-f]{40})/.exec(result.raw)![1]!;
      expect(() => git(root, "cat-file", "-e", committed)).toThrow();
    },
  );
});
