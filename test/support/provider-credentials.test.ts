import { describe, expect, it } from "vitest";
import { otherProvidersVariables } from "../../src/support/provider-credentials.js";

describe("another provider's credentials", () => {
  const env = {
    ANTHROPIC_API_KEY: "a",
    CLAUDE_CODE_OAUTH_TOKEN: "b",
    OPENAI_API_KEY: "c",
    OPENAI_BASE_URL: "d",
    GEMINI_API_KEY: "e",
    GOOGLE_APPLICATION_CREDENTIALS: "f",
    MISTRAL_API_KEY: "g",
    GH_TOKEN: "h",
    AWS_ACCESS_KEY_ID: "i",
    DATABASE_PASSWORD: "j",
    PATH: "/bin",
  };

  it("are every model provider's variables but the agent's own; general-purpose ones stay", () => {
    expect(otherProvidersVariables("claude", env).sort()).toEqual([
      "GEMINI_API_KEY",
      "GOOGLE_APPLICATION_CREDENTIALS",
      "MISTRAL_API_KEY",
      "OPENAI_API_KEY",
      "OPENAI_BASE_URL",
    ]);
    expect(otherProvidersVariables("codex", env)).not.toContain("OPENAI_API_KEY");
    expect(otherProvidersVariables("codex", env)).toContain("ANTHROPIC_API_KEY");
    expect(otherProvidersVariables("gemini", env)).not.toContain("GOOGLE_APPLICATION_CREDENTIALS");
    for (const product of ["claude", "codex", "gemini", "copilot"]) {
      const dropped = otherProvidersVariables(product, env);
      for (const general of ["GH_TOKEN", "AWS_ACCESS_KEY_ID", "DATABASE_PASSWORD", "PATH"])
        expect(dropped, product).not.toContain(general);
    }
  });

  it("are none for an agent that may use any provider (opencode, a custom program)", () => {
    expect(otherProvidersVariables("opencode", env)).toEqual([]);
    expect(otherProvidersVariables("my-agent", env)).toEqual([]);
  });

  it("leave Google's to claude on Vertex", () => {
    const vertex = { ...env, CLAUDE_CODE_USE_VERTEX: "1" };
    expect(otherProvidersVariables("claude", vertex)).not.toContain("GOOGLE_APPLICATION_CREDENTIALS");
    expect(otherProvidersVariables("claude", vertex)).toContain("OPENAI_API_KEY");
  });
});
