import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { displayCommand } from "../../src/agents/display.js";
import { classifyFailure, makeFailure } from "../../src/agents/failure.js";
import { displayMessage } from "../../src/agents/message-text.js";
import { nativeReportFrom } from "../../src/agents/native-report.js";
import { PROMPT_ARG_MAX, promptArg } from "../../src/agents/prompt-arg.js";
import { tomlValue } from "../../src/agents/toml-value.js";
import { summarizeToolInput, unwrapShell } from "../../src/agents/tool-summary.js";
import { ToolTracker } from "../../src/agents/tool-tracker.js";
import { compareVersions, detectCli, parseVersion } from "../../src/agents/version.js";
import { pairingProblems } from "../helpers/event-checks.js";
import { makeLaunch } from "../helpers/launch.js";
import { tempDir } from "../helpers/repo.js";

describe("tool tracker", () => {
  it("pairs by id, ignores repeats, starts an end that came alone, closes what is left open as failed", () => {
    const tracker = new ToolTracker(() => 1000);
    const events = [
      ...tracker.start("a", "shell", "ls"),
      ...tracker.start("a", "shell", "ls"),
      ...tracker.end("a", { ok: true, output: "x\ny" }),
      ...tracker.end("a", { ok: true }),
      ...tracker.end("b", { ok: false, tool: "bash", input: "false", exitCode: 1 }),
      ...tracker.start("c", "Bash", "sleep 100"),
      ...tracker.closeAll("the agent exited"),
    ];
    expect(pairingProblems(events)).toEqual([]);
    expect(events.map((e) => (e.type === "tool_use" ? `${e.id}:${e.status}` : e.type))).toEqual([
      "a:started",
      "a:succeeded",
      "b:started",
      "b:failed",
      "c:started",
      "c:failed",
    ]);
    expect(events[1]).toMatchObject({ tool: "shell", output_summary: "x ⏎ y", duration_ms: 0 });
    expect(events[5]).toMatchObject({ tool: "Bash", output_summary: "the agent exited" });
  });
});

describe("summaries", () => {
  it("shows the command of a shell call, unwrapped from bash -lc", () => {
    expect(unwrapShell("/bin/bash -lc 'echo OK > hello.txt'")).toBe("echo OK > hello.txt");
    expect(unwrapShell(`bash -lc 'echo '\\''quoted'\\'''`)).toBe("echo 'quoted'");
    expect(summarizeToolInput({ cmd: ["bash", "-lc", "ls"] })).toBe("bash -lc ls");
    expect(summarizeToolInput({ file_path: "/a/b.ts", content: "…" })).toBe("/a/b.ts");
    expect(summarizeToolInput({ x: 1 })).toBe('{"x":1}');
    expect(summarizeToolInput({ command: "x".repeat(1000) }).length).toBeLessThanOrEqual(240);
  });

  it("a message that is itself a report shows its summary; a fenced report block is shortened", () => {
    const report = { protocol: "caesar.report/v1", status: "success", summary: "Fixed it." };
    expect(displayMessage(JSON.stringify(report))).toBe("Report (success): Fixed it.");
    const fenced = `Done.\n\n\`\`\`json caesar:report\n${JSON.stringify(report, null, 2)}\n\`\`\`\nBye`;
    expect(displayMessage(fenced)).toBe("Done.\n\n[Report (success): Fixed it.]\nBye");
    expect(displayMessage('{"not":"a report"}')).toBe('{"not":"a report"}');
  });
});

describe("failures", () => {
  it("names the cause from a status or the words", () => {
    expect(classifyFailure("x", 401)).toBe("auth_failed");
    expect(classifyFailure("exceeded retry limit, last status: 429 Too Many Requests")).toBe("rate_limited");
    expect(
      classifyFailure("Reconnecting... waiting for network (Connection failed: error sending request)"),
    ).toBe("model_unreachable");
    expect(classifyFailure("API Error: Connection refused (ECONNREFUSED)")).toBe("model_unreachable");
    expect(classifyFailure("something odd")).toBe("agent_error");
    expect(makeFailure("mock: invalid api key", 401).message).toBe(
      "The model provider refused the credentials: mock: invalid api key",
    );
  });
});

describe("native reports", () => {
  it("uses structured output only when it is really there, dropping the nulls of the strict schema", () => {
    expect(nativeReportFrom("not json at all")).toBeUndefined();
    expect(nativeReportFrom("[1]")).toBeUndefined();
    expect(
      nativeReportFrom('{"summary":"s","details":null,"changes":[{"path":"a","summary":null}]}'),
    ).toEqual({
      summary: "s",
      changes: [{ path: "a" }],
    });
  });
});

describe("command lines", () => {
  it("TOML values for codex -c overrides", () => {
    expect(tomlValue({ A: 'x"y', "b.c": [1, true] })).toBe('{ A = "x\\"y", "b.c" = [1, true] }');
  });

  it("the shown command hides secrets and shortens long arguments", () => {
    const shown = displayCommand("agent", ["--api-key", "sk-123", "--token=abc", "x".repeat(500), "it's"]);
    expect(shown).not.toContain("sk-123");
    expect(shown).not.toContain("abc");
    expect(shown).toContain("--token=***");
    expect(shown.length).toBeLessThan(200);
    expect(shown).toContain(`'it'\\''s'`);
  });

  it("a brief too long for argv travels in a file the agent is told to read", () => {
    const dir = tempDir("caesar-prompt-");
    const launch = makeLaunch({
      agent: "codex",
      workspace: dir,
      taskDir: join(dir, "task"),
      prompt: "p".repeat(PROMPT_ARG_MAX + 1),
    });
    const arg = promptArg(launch);
    expect(arg.files).toHaveLength(1);
    expect(arg.text).toContain(arg.files[0]!.path);
    expect(promptArg({ ...launch, prompt: "short" })).toEqual({ text: "short", files: [] });
  });
});

describe("version detection", () => {
  it("reads versions from any banner and compares them numerically", () => {
    expect(parseVersion("codex-cli 0.171.0")).toBe("0.171.0");
    expect(parseVersion("2.1.332 (Claude Code)")).toBe("2.1.332");
    expect(compareVersions("0.99.0", "0.171.0")).toBeLessThan(0);
    expect(compareVersions("1.0.102", "1.0.102")).toBe(0);
  });

  it("finds the CLI on PATH, runs --version, warns outside the verified range", async () => {
    const dir = tempDir("caesar-fake-cli-");
    const bin = join(dir, "fakecli");
    writeFileSync(bin, "#!/bin/sh\necho 'fakecli 2.0.1'\n");
    chmodSync(bin, 0o755);
    const env = { PATH: `${dir}:/usr/bin:/bin` };
    expect(await detectCli({ bin: "fakecli", verifiedRange: { min: "2.0.1", max: "2.0.1" } }, env)).toEqual({
      installed: true,
      path: bin,
      version: "2.0.1",
    });
    const outside = await detectCli({ bin: "fakecli", verifiedRange: { min: "1.0.0", max: "1.9.9" } }, env);
    expect(outside.warning).toContain("outside the verified range (1.0.0–1.9.9)");
    expect(await detectCli({ bin: "no-such-cli-here" }, env)).toEqual({ installed: false });
  });
});
