import { describe, expect, it } from "vitest";
import { explainBadName, slugify, validateName } from "../../src/chat/names.js";

describe("names that become file names", () => {
  it("accepts lower-case words with digits, dots, dashes and underscores", () => {
    for (const name of ["alice", "claude-1", "codex_2", "agent.7", "a", "0day"]) {
      expect(validateName(name, "agent")).toBe(name);
    }
  });

  it("refuses traversal, separators, hidden names, case, device names and broadcast words", () => {
    const bad: [string, RegExp][] = [
      ["..", /may only hold|contains/],
      ["../x", /may only hold/],
      ["a/b", /may only hold/],
      ["a\\b", /may only hold/],
      [".hidden", /may only hold/],
      ["_meta", /may only hold/],
      ["a..b", /contains "\.\."/],
      ["trailing.", /ends with/],
      ["Alice", /upper-case.*alice/],
      ["con", /reserved device/],
      ["lpt1.txt", /reserved device/],
      ["", /empty/],
      ["x".repeat(65), /longer than 64/],
      ["all", /means everyone/],
      ["white space", /may only hold/],
      ["nul\u0000", /may only hold/],
    ];
    for (const [name, problem] of bad) expect(explainBadName(name, "agent"), name).toMatch(problem);
    expect(() => validateName("../x", "channel")).toThrow(/Invalid channel name/);
    expect(explainBadName("all", "channel")).toBeUndefined();
  });

  it("makes lower-case ASCII slugs from any title", () => {
    expect(slugify("Converge schema v0.2")).toBe("converge-schema-v0-2");
    expect(slugify("Écrire l'été — ça marche!")).toBe("ecrire-l-ete-ca-marche");
    expect(slugify("../../etc/passwd")).toBe("etc-passwd");
    expect(slugify("日本語")).toBe("message");
    const long = slugify("a very long title that goes on and on well past the limit of forty");
    expect(long.length).toBeLessThanOrEqual(40);
    expect(long).toBe("a-very-long-title-that-goes-on-and-on");
  });
});
