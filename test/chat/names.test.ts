import { describe, expect, it } from "vitest";
import { explainBadName, slugify, validateName } from "../../src/chat/names.js";

describe("names (the reference implementation's rules)", () => {
  it("accepts what chat.py accepts: case, dots, underscores, spaces", () => {
    for (const name of ["alice", "Alice", "bob_2", "claude.code", "Claude Code", "codex-1", "con", "日本"])
      expect(validateName(name, "agent")).toBe(name);
    for (const name of ["Review", "review", "team chat", "v0.2", "con"])
      expect(validateName(name, "channel")).toBe(name);
  });

  it("refuses channel names that would leave the root or take a channel's own files", () => {
    const bad: [string, RegExp][] = [
      ["", /empty/],
      ["..", /not a folder name/],
      ["../x", /'\/'/],
      ["a/b", /'\/'/],
      ["a\\b", /'\/'/],
      ["c:x", /':'/],
      [".hidden", /starts with '\.' or '_'/],
      ["_internal", /starts with '\.' or '_'/],
      ["a\nb", /control character/],
      [" padded", /space/],
      ["x".repeat(201), /longer than 200/],
    ];
    for (const [name, problem] of bad) expect(explainBadName(name, "channel"), name).toMatch(problem);
    expect(() => validateName("../x", "channel")).toThrow(/Invalid channel name/);
  });

  it("refuses agent names that would not survive a frontmatter line", () => {
    const bad: [string, RegExp][] = [
      ["", /empty/],
      ["   ", /empty/],
      ["all", /means everyone/],
      ["*", /means everyone/],
      ["a,b", /','/],
      ["bob #2", /' #'/],
      ["bob\nfrom: mallory", /control character/],
      ["nul\u0000", /control character/],
      [" bob", /space/],
      ['"no"', /quote/],
      ["'x", /quote/],
      ["[bot]", /bracket/],
    ];
    for (const [name, problem] of bad) expect(explainBadName(name, "agent"), name).toMatch(problem);
    // A path is only text in a frontmatter value, and its slug is a plain file name.
    expect(validateName("../../etc/x", "agent")).toBe("../../etc/x");
    expect(explainBadName("all", "channel")).toBeUndefined();
  });

  it("slugs names and titles exactly as chat.py does", () => {
    // Values computed by the reference's slugify (chat.py), kept here as the contract.
    const cases: [string, string][] = [
      ["bob_2", "bob-2"],
      ["claude.code", "claude-code"],
      ["Alice", "alice"],
      ["Converge schema v0.2", "converge-schema-v0-2"],
      ["Écrire l'été — ça marche!", "crire-l-t-a-marche"],
      ["../../etc/passwd", "etc-passwd"],
      ["日本語", "msg"],
      ["", "msg"],
      [
        "a very long title that goes on and on well past the limit of forty",
        "a-very-long-title-that-goes-on-and-on-we",
      ],
      [`${"x".repeat(39)}-y`, "x".repeat(39)],
    ];
    for (const [text, slug] of cases) expect(slugify(text), text).toBe(slug);
  });
});
