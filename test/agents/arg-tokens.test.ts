import { describe, expect, it } from "vitest";
import { substituteArgs, validateArgTokens } from "../../src/agents/arg-tokens.js";
import { makeCustomAdapter } from "../../src/agents/custom.js";

describe("argument tokens", () => {
  it("substitute every token and drop an argument whose token has no value", () => {
    const args = [
      "--prompt={{prompt}}",
      "{{workspace}}",
      "--dir",
      "{{taskDir}}",
      "-o",
      "{{reportPath}}",
      "--model={{model}}",
    ];
    expect(
      substituteArgs(args, { prompt: "do it", workspace: "/w", taskDir: "/t", reportPath: "/t/report.json" }),
    ).toEqual(["--prompt=do it", "/w", "--dir", "/t", "-o", "/t/report.json"]);
  });

  it("refuse args without {{prompt}}, naming the agent and the fix", () => {
    expect(() => validateArgTokens("my-agent", ["--yes"], "process")).toThrow(
      expect.objectContaining({
        message: 'Agent "my-agent": args has no {{prompt}}.',
        detail: expect.stringContaining('args = ["{{prompt}}"]'),
      }),
    );
  });

  it("refuse unknown tokens and cwd_mode flag without a workspace token", () => {
    expect(() => validateArgTokens("a", ["{{prompt}}", "{{cwd}}"], "process")).toThrow(
      /unknown token \{\{cwd\}\}/,
    );
    expect(() => validateArgTokens("a", ["{{prompt}}"], "flag")).toThrow(/cwd_mode = "flag"/);
  });

  it("build a custom agent's command line: workspace as cwd (process) or via the token (flag)", () => {
    const launch = {
      task: { workspace: "/w" },
      paths: { dir: "/t", report: "/t/report.json" },
      prompt: "P",
      extraArgs: ["--x"],
      model: "m1",
    } as never;
    const process = makeCustomAdapter(
      {
        id: "a",
        bin: "a.sh",
        args: ["{{prompt}}", "--model", "{{model}}"],
        cwd_mode: "process",
        protocol: "oacp",
      },
      "/root",
    );
    expect(process.buildCommand(launch)).toMatchObject({
      bin: "a.sh",
      args: ["P", "--model", "m1", "--x"],
      cwd: "/w",
    });
    expect(process.capabilities.model.value).toBe(true);
    const flag = makeCustomAdapter(
      {
        id: "b",
        bin: "./b.sh",
        args: ["--cd", "{{workspace}}", "{{prompt}}"],
        cwd_mode: "flag",
        protocol: "oacp",
      },
      "/root",
    );
    expect(flag.buildCommand(launch)).toMatchObject({
      bin: "/root/b.sh",
      args: ["--cd", "/w", "P", "--x"],
      cwd: "/t",
    });
  });
});
