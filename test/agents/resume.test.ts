import { describe, expect, it } from "vitest";
import { BUILTIN_ADAPTERS } from "../../src/agents/catalog.js";
import { makeLaunch } from "../helpers/launch.js";

/** How each adapter continues a session (verified live on the pinned CLIs: live-suite.ts, "resume"). */
const EXPECTED: Record<string, (args: string[]) => void> = {
  codex(args) {
    // `exec resume` takes neither -s nor --add-dir (0.171): the sandbox comes through -c.
    expect(args.slice(0, 2)).toEqual(["exec", "resume"]);
    expect(args).not.toContain("-s");
    expect(args).not.toContain("--add-dir");
    expect(args).toContain('sandbox_mode="workspace-write"');
    expect(args.some((arg) => arg.startsWith("sandbox_workspace_write.writable_roots=["))).toBe(true);
    expect(args.slice(-3)).toEqual(["session-1234", "--", "fix it"]);
  },
  claude: (args) =>
    expect(args.slice(args.indexOf("--resume"), args.indexOf("--resume") + 2)).toEqual([
      "--resume",
      "session-1234",
    ]),
  opencode: (args) =>
    expect(args.slice(args.indexOf("--session"), args.indexOf("--session") + 2)).toEqual([
      "--session",
      "session-1234",
    ]),
  gemini: (args) =>
    expect(args.slice(args.indexOf("--resume"), args.indexOf("--resume") + 2)).toEqual([
      "--resume",
      "session-1234",
    ]),
  copilot: (args) => expect(args).toContain("--resume=session-1234"),
};

describe("continuing a session (LaunchContext.resume)", () => {
  for (const adapter of BUILTIN_ADAPTERS) {
    const expected = EXPECTED[adapter.id];
    it(`${adapter.id}: ${expected ? "continues it with its CLI's own flag" : "says it cannot"}`, () => {
      expect(adapter.capabilities.resume.value).toBe(expected !== undefined);
      if (!expected) return;
      const launch = makeLaunch({
        agent: adapter.id,
        workspace: "/tmp/w",
        taskDir: "/tmp/t",
        prompt: "fix it",
        resume: "session-1234",
      });
      expected(adapter.buildCommand(launch).args);
      // Without a session to continue, no resume flag at all.
      const fresh = adapter.buildCommand({ ...launch, resume: undefined }).args.join(" ");
      expect(fresh).not.toContain("session-1234");
    });
  }

  it("codex read-only: the resumed run is sandboxed read-only too", () => {
    const codex = BUILTIN_ADAPTERS.find((adapter) => adapter.id === "codex")!;
    const launch = makeLaunch({
      agent: "codex",
      workspace: "/tmp/w",
      taskDir: "/tmp/t",
      mode: "read-only",
      resume: "s-1",
    });
    expect(codex.buildCommand(launch).args).toContain('sandbox_mode="read-only"');
  });
});
