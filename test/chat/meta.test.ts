import { describe, expect, it } from "vitest";
import { normalizeMeta, parseMeta } from "../../src/chat/meta.js";

// _meta.json is written by other tools too (chat.py, people): read leniently, refuse clearly.
describe("_meta.json", () => {
  it("reads another tool's shapes: comma members, a number as topic, unknown keys kept, channel from the folder", () => {
    expect(
      normalizeMeta({ members: " alice, bob ,,", topic: 7, created: null, owner_tool: { v: 1 } }, "review"),
    ).toEqual({
      channel: "review",
      members: ["alice", "bob"],
      topic: "7",
      created: "",
      owner_tool: { v: 1 },
    });
    expect(normalizeMeta({ channel: "Review", members: ["alice"] }, "Review")).toMatchObject({
      channel: "Review",
      members: ["alice"],
    });
  });

  it("reads the governance profile; a band caesar does not know fails closed", () => {
    expect(
      normalizeMeta(
        { maintainer: "mia", approval_bands: { merge: "auto", deploy: "ask-the-boss" }, veto_window_s: 30 },
        "c",
      ),
    ).toMatchObject({
      maintainer: "mia",
      approval_bands: { merge: "auto", deploy: "approval-required" },
      veto_window_s: 30,
    });
  });

  it("names the field and what was expected", () => {
    expect(normalizeMeta([], "c")).toBe("the document: not an object");
    expect(normalizeMeta({ channel: 3 }, "c")).toBe("channel: expected a string");
    expect(normalizeMeta({ members: ["a", 2] }, "c")).toBe("members: expected a list of names");
    expect(normalizeMeta({ maintainer: "" }, "c")).toBe("maintainer: expected a name");
    expect(normalizeMeta({ approval_bands: ["auto"] }, "c")).toBe(
      "approval_bands: expected an object of action: band",
    );
    expect(normalizeMeta({ approval_bands: { merge: 1 } }, "c")).toBe(
      "approval_bands.merge: expected a band name",
    );
    expect(normalizeMeta({ veto_window_s: 0 }, "c")).toBe(
      "veto_window_s: expected a positive number of seconds",
    );
    expect(normalizeMeta({ veto_window_s: "30" }, "c")).toBe(
      "veto_window_s: expected a positive number of seconds",
    );
  });

  it("keys that name Object's own (an action called __proto__) stay plain data", () => {
    const meta = parseMeta('{"approval_bands": {"__proto__": "auto", "merge": "notify"}}', "/r/c", "c");
    expect(Object.getPrototypeOf(meta.approval_bands)).toBe(Object.prototype);
    expect(Object.entries(meta.approval_bands!)).toEqual([
      ["__proto__", "auto"],
      ["merge", "notify"],
    ]);
    expect(normalizeMeta({ members: null }, "c")).toBe("members: expected a list of names");
    expect(normalizeMeta({ channel: null }, "c")).toBe("channel: expected a string");
  });

  it("a malformed file is a meta_invalid error naming the file", () => {
    expect(() => parseMeta("{ nope", "/r/c", "c")).toThrow(
      /\/r\/c\/_meta\.json is not valid channel metadata: not JSON/,
    );
    expect(() => parseMeta('{"members": 3}', "/r/c", "c")).toThrow(/members: expected a list of names/);
  });
});
