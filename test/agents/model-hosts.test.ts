import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { modelHosts, ownKeyVariables } from "../../src/agents/model-hosts.js";
import { tempDir } from "../helpers/repo.js";

describe("the hosts an agent needs for its model", () => {
  it("are its provider's, its base URLs' and its cloud region's", () => {
    expect(modelHosts("claude", { ANTHROPIC_BASE_URL: "http://litellm:4000" })).toEqual(
      expect.arrayContaining(["api.anthropic.com", "litellm:4000"]),
    );
    expect(
      modelHosts("claude", {
        CLAUDE_CODE_USE_BEDROCK: "1",
        AWS_REGION: "eu-west-3",
        CLOUD_ML_REGION: "us-east5",
      }),
    ).toEqual(
      expect.arrayContaining([
        "bedrock-runtime.eu-west-3.amazonaws.com",
        "us-east5-aiplatform.googleapis.com",
      ]),
    );
    expect(modelHosts("gemini", { GOOGLE_CLOUD_LOCATION: "europe-west4" })).toContain(
      "europe-west4-aiplatform.googleapis.com",
    );
    expect(modelHosts("antigravity", {})).toContain("generativelanguage.googleapis.com");
    expect(modelHosts("my-agent", { ANTHROPIC_BASE_URL: "http://x:1" })).toEqual([]);
  });

  it("include codex's own providers, whose key variables it keeps", () => {
    const home = tempDir("caesar-codex-home-");
    writeFileSync(
      join(home, "config.toml"),
      '[model_providers.router]\nbase_url = "https://openrouter.ai/api/v1"\nenv_key = "OPENROUTER_API_KEY"\n',
    );
    expect(modelHosts("codex", { CODEX_HOME: home })).toContain("openrouter.ai");
    expect(ownKeyVariables("codex", { CODEX_HOME: home })).toEqual(["OPENROUTER_API_KEY"]);
    expect(ownKeyVariables("claude", { CODEX_HOME: home })).toEqual([]);
  });
});
