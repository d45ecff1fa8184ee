import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { listAdapters } from "../../src/agents/registry.js";
import { BUILTIN_AGENT_IDS } from "../../src/config/builtin-agents.js";
import { mergeLayers } from "../../src/config/effective.js";
import { validateMergedConfig } from "../../src/config/validate.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { makeRepo, tempDir, writeFiles } from "../helpers/repo.js";

describe("configuration validation across layers: impossible delegates and risk profiles", () => {
  it("knows caesar's built-in agents exactly as the registry does", () => {
    const ids = listAdapters(mergeLayers([]), "/nowhere").map((adapter) => adapter.id);
    expect([...BUILTIN_AGENT_IDS].sort()).toEqual(ids.sort());
  });

  it("refuses each impossible value, naming the file that set it and the key", async () => {
    const root = makeRepo();
    writeFiles(root, {
      ".caesar/config.toml": [
        "[agents.codex]",
        'delegates = ["codex", "clade", "claude", { agent = "claude", mode = "independent" }]',
        'risk_profile = "defualt"',
        "",
      ].join("\n"),
    });
    const file = join(root, ".caesar", "config.toml");
    const result = await runCaesar(["policy", "show", "--json"], {
      cwd: root,
      env: { XDG_CONFIG_HOME: tempDir("caesar-xdg-") },
    });
    expect(result.code).toBe(2);
    const error = parseJsonOutput<{ error: { code: string; summary: string; detail: string } }>(result).error;
    expect(error.code).toBe("config_invalid");
    expect(error.summary).toBe("The configuration has 4 errors.");
    expect(error.detail.split("\n").slice(0, 4)).toEqual([
      `${file}: agents.codex.delegates[0] = "codex" names this agent itself; an agent cannot delegate to itself`,
      `${file}: agents.codex.delegates[1] = "clade" but agents.clade is not configured (no built-in agent or [[agent]] has that id) — did you mean "claude"?`,
      `${file}: agents.codex.delegates[3] = "claude" duplicates an earlier delegate target`,
      `${file}: agents.codex.risk_profile = "defualt" names no [risk_profiles.defualt] table in any layer — did you mean "default"?`,
    ]);
  });

  it("accepts what other layers declare: a custom agent and a risk profile of the global layer", () => {
    const config = mergeLayers([
      ["global", "/home/me/.config/caesar/config.toml", { risk_profiles: { strict: {} } }],
      [
        "project",
        "/p/.caesar/config.toml",
        {
          agent: [
            { id: "mine", bin: "./mine.sh", args: ["{{prompt}}"], cwd_mode: "process", protocol: "oacp" },
          ],
          agents: {
            codex: { risk_profile: "strict", delegates: ["mine", { agent: "claude", mode: "bounded" }] },
          },
        },
      ],
    ]);
    expect(() => validateMergedConfig(config)).not.toThrow();
  });

  it("names the layer that won: a local layer's delegates list is the one reported", () => {
    const config = mergeLayers([
      ["project", "/p/.caesar/config.toml", { agents: { codex: { delegates: ["claude"] } } }],
      ["local", "/p/.caesar/config.local.toml", { agents: { codex: { delegates: ["nobody"] } } }],
    ]);
    expect(() => validateMergedConfig(config)).toThrow(
      '/p/.caesar/config.local.toml: agents.codex.delegates[0] = "nobody" but agents.nobody is not configured',
    );
  });
});
