import { describe, expect, it } from "vitest";
import { mergeLayers } from "../../src/config/effective.js";
import { parseConfigText } from "../../src/config/load.js";

describe("configuration files", () => {
  it("name the file, the unknown key and the closest valid key", () => {
    expect(() => parseConfigText("[policy]\nmax_paralel = 3\n", "/p/.caesar/config.toml")).toThrow(
      expect.objectContaining({
        message: "/p/.caesar/config.toml has 1 error.",
        detail: 'unknown key "policy.max_paralel" — did you mean "max_parallel"?',
      }),
    );
    expect(() => parseConfigText('[[agent]]\nid = "x"\nbin = "x"\nargz = []\n', "c.toml")).toThrow(
      expect.objectContaining({ detail: 'unknown key "agent[0].argz" — did you mean "args"?' }),
    );
    expect(() => parseConfigText("[polcy]\n", "c.toml")).toThrow(
      expect.objectContaining({ detail: expect.stringContaining('did you mean "policy"') }),
    );
  });

  it("report TOML syntax errors as configuration errors (exit 2)", () => {
    expect(() => parseConfigText("[policy\n", "c.toml")).toThrow(
      expect.objectContaining({ code: "config_syntax", exitCode: 2 }),
    );
  });

  it("refuse two [[agent]] entries with one id in a file, naming both", () => {
    const text = [
      "[policy]",
      "max_parallel = 2",
      "",
      "[[agent]]",
      'id = "helper"',
      'bin = "one.sh"',
      "",
      "[[agent]]",
      'id = "other"',
      'bin = "other.sh"',
      "",
      "  [[ agent ]]",
      'id = "helper"',
      'bin = "two.sh"',
    ].join("\n");
    expect(() => parseConfigText(text, "/p/.caesar/config.toml")).toThrow(
      expect.objectContaining({
        code: "config_duplicate_agent",
        exitCode: 2,
        message: '/p/.caesar/config.toml declares the agent "helper" twice: at line 4 and at line 12.',
      }),
    );
    // Across layers, a more specific one redeclares an id on purpose, and wins whole.
    const merged = mergeLayers([
      ["project", "p", parseConfigText('[[agent]]\nid = "helper"\nbin = "one.sh"\n', "p")],
      ["local", "l", parseConfigText('[[agent]]\nid = "helper"\nbin = "two.sh"\n', "l")],
    ]);
    expect(merged.agents.helper).toMatchObject({ value: { bin: "two.sh" }, source: "local" });
  });

  it("reads the seed's [[agent]] example with its defaults", () => {
    const config = parseConfigText(
      '[[agent]]\nid = "my-agent"\nbin = "my-agent.sh"\nargs = ["{{prompt}}"]\n',
      "c.toml",
    );
    expect(config.agent?.[0]).toEqual({
      id: "my-agent",
      bin: "my-agent.sh",
      args: ["{{prompt}}"],
      cwd_mode: "process",
      protocol: "oacp",
    });
  });

  it("merge layers field by field, most specific winning, with provenance", () => {
    const merged = mergeLayers([
      ["global", "g", { policy: { max_parallel: 2, timeout: "1h" } }],
      ["project", "p", { policy: { max_parallel: 3 } }],
      ["local", "l", { policy: { allow_inplace_write: true } }],
    ]);
    expect(merged.policy.max_parallel).toEqual({ value: 3, source: "project" });
    expect(merged.policy.timeout).toEqual({ value: "1h", source: "global" });
    expect(merged.policy.allow_inplace_write).toEqual({ value: true, source: "local" });
    expect(merged.policy.mode).toEqual({ value: "write", source: "default" });
  });

  it("[checks]: defaults, layers merged field by field, and bad values named", () => {
    const merged = mergeLayers([
      ["project", "p", { checks: { default: ["npm test"], attempts: 2 } }],
      ["local", "l", { checks: { timeout: "2m" } }],
    ]);
    expect(merged.checks.default).toEqual({ value: ["npm test"], source: "project" });
    expect(merged.checks.attempts).toEqual({ value: 2, source: "project" });
    expect(merged.checks.timeout).toEqual({ value: "2m", source: "local" });
    expect(merged.checks.follow_up).toEqual({ value: "resume", source: "default" });
    for (const [text, key] of [
      ["[checks]\nattempts = 11\n", "checks.attempts"],
      ['[checks]\nfollow_up = "later"\n', "checks.follow_up"],
      ['[checks]\ndefault = "npm test"\n', "checks.default"],
      ["[checks]\ndefualt = []\n", 'did you mean "default"'],
      ['[[role]]\nname = "r"\nchecks = [1]\n', "role[0].checks"],
    ] as const) {
      expect(() => parseConfigText(text, "c.toml"), text).toThrow(
        expect.objectContaining({ exitCode: 2, detail: expect.stringContaining(key) }),
      );
    }
  });
});
