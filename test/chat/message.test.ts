import { describe, expect, it } from "vitest";
import { formatTimestamp, isTimestampWithOffset } from "../../src/chat/clock.js";
import { parseMessageFileName } from "../../src/chat/filename.js";
import { formatValue, parseFrontmatter } from "../../src/chat/frontmatter.js";
import { formatMessage, isRelevantTo, parseMessage, parseRecipients } from "../../src/chat/message.js";

describe("message files", () => {
  it("round-trips a message through its text", () => {
    const text = formatMessage({
      seq: 12,
      from: "alice",
      to: ["bob", "carol"],
      reply_to: 11,
      channel: "review",
      ts: new Date("2026-07-17T07:03:22Z"),
      status: "proposal",
      title: 'Converge: "schema" v0.2 #12',
      body: "Body\n---\nwith a rule\n",
    });
    expect(text).toContain("to: bob, carol\n");
    expect(text).toContain('title: "Converge: \\"schema\\" v0.2 #12"\n');
    const parsed = parseMessage(text, "0012-alice-x.md", 12, "review");
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.message).toMatchObject({
      seq: 12,
      from: "alice",
      to: ["bob", "carol"],
      reply_to: 11,
      channel: "review",
      status: "proposal",
      title: 'Converge: "schema" v0.2 #12',
      body: "Body\n---\nwith a rule\n",
      warnings: [],
    });
  });

  it("reads the spec's own example, YAML comments and all", () => {
    const text = [
      "---",
      "seq: 12",
      "from: alice",
      'to: bob            # a single agent, a comma-list, or "all" (broadcast)',
      "reply_to: 11         # OPTIONAL — sequence this message answers",
      "channel: review",
      "ts: 2026-07-17T14:03:22+07:00",
      "status: discussion   # free label: discussion | proposal | ack | done | ...",
      "title: Converge schema v0.2",
      "---",
      "<markdown body>",
    ].join("\n");
    const parsed = parseMessage(text, "0012-alice-converge.md", 12, "review");
    expect(parsed).toMatchObject({
      ok: true,
      message: {
        to: ["bob"],
        reply_to: 11,
        status: "discussion",
        title: "Converge schema v0.2",
        warnings: [],
      },
    });
  });

  it("reads what other writers produce: CRLF, a BOM, flow lists, single quotes, extra keys", () => {
    const text =
      "\uFEFF---\r\nseq: 3\r\nfrom: Bob\r\nto: [alice, 'carol']\r\nchannel: c\r\nts: 2026-01-01T00:00:00Z\r\ntitle: 'It''s done'\r\npriority: high\r\n---\r\nbody\r\n";
    const parsed = parseMessage(text, "0003-bob-done.md", 3, "c");
    expect(parsed).toMatchObject({
      ok: true,
      message: {
        from: "Bob",
        to: ["alice", "carol"],
        title: "It's done",
        extra: { priority: "high" },
        body: "body\n",
      },
    });
  });

  it("never throws on a malformed file, and says what is wrong", () => {
    const cases: [string, RegExp][] = [
      ["no frontmatter at all", /does not start/],
      ["---\nseq: 1\nfrom: a\ntitle: never closed\n", /no closing/],
      ["---\nseq: 1\ntitle: who?\n---\n", /no `from`/],
      ["---\n\u0000\u0001binary\n---\n", /not a text file/],
      ["", /does not start/],
    ];
    for (const [text, problem] of cases) {
      const parsed = parseMessage(text, "0001-x-y.md", 1, "c");
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.problem).toMatch(problem);
    }
  });

  it("delivers a non-conforming but usable message with warnings", () => {
    const parsed = parseMessage(
      "---\nseq: 9\nfrom: a\nts: yesterday\nreply_to: soon\n---\n",
      "0007-a-x.md",
      7,
      "c",
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.message.seq).toBe(7);
    expect(parsed.message.warnings.join("\n")).toMatch(/differs from the file name's 7/);
    expect(parsed.message.warnings.join("\n")).toMatch(/no `title` field/);
    expect(parsed.message.warnings.join("\n")).toMatch(/not an ISO-8601 time/);
    expect(parsed.message.warnings.join("\n")).toMatch(/reply_to: soon/);
  });

  it("quotes only values a YAML reader would misread", () => {
    expect(formatValue("plain title")).toBe("plain title");
    expect(formatValue("bob, carol")).toBe("bob, carol");
    expect(formatValue("a: b")).toBe('"a: b"');
    expect(formatValue("fix #12")).toBe('"fix #12"');
    expect(formatValue("- list")).toBe('"- list"');
    expect(formatValue("yes")).toBe('"yes"');
    expect(formatValue("")).toBe('""');
    expect(parseFrontmatter(`---\nk: ${formatValue('say "hi": now')}\n---\n`)).toMatchObject({
      ok: true,
      fields: { k: 'say "hi": now' },
    });
  });
});

describe("recipients and relevance", () => {
  it("reads broadcast as absent, all or *", () => {
    expect(parseRecipients(undefined)).toEqual(["all"]);
    expect(parseRecipients("")).toEqual(["all"]);
    expect(parseRecipients("*")).toEqual(["all"]);
    expect(parseRecipients("ALL")).toEqual(["all"]);
    expect(parseRecipients("bob,carol")).toEqual(["bob", "carol"]);
  });

  it("is relevant when broadcast or addressed, never when it is one's own", () => {
    expect(isRelevantTo({ from: "alice", to: ["all"] }, "bob")).toBe(true);
    expect(isRelevantTo({ from: "alice", to: ["Bob"] }, "bob")).toBe(true);
    expect(isRelevantTo({ from: "alice", to: ["carol"] }, "bob")).toBe(false);
    expect(isRelevantTo({ from: "bob", to: ["all"] }, "bob")).toBe(false);
    expect(isRelevantTo({ from: "Bob", to: ["bob"] }, "bob")).toBe(false);
  });
});

describe("file names and timestamps", () => {
  it("takes only NNNN-….md files as messages", () => {
    expect(parseMessageFileName("0001-alice-hello.md")).toBe(1);
    expect(parseMessageFileName("12345-alice-hello.md")).toBe(12345);
    expect(parseMessageFileName("_meta.json")).toBeUndefined();
    expect(parseMessageFileName(".0001-alice-hello.md.123.tmp")).toBeUndefined();
    expect(parseMessageFileName("0001-alice-hello.md.tmp")).toBeUndefined();
    expect(parseMessageFileName("0000-zero.md")).toBeUndefined();
    expect(parseMessageFileName("notes.md")).toBeUndefined();
  });

  it("writes ISO-8601 with an offset, whatever the time zone", () => {
    const ts = formatTimestamp(new Date("2026-07-17T07:03:22.900Z"));
    expect(ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
    expect(Date.parse(ts)).toBe(Date.parse("2026-07-17T07:03:22Z"));
    expect(isTimestampWithOffset("2026-07-17T14:03:22+07:00")).toBe(true);
    expect(isTimestampWithOffset("2026-07-17T14:03:22Z")).toBe(true);
    expect(isTimestampWithOffset("2026-07-17T14:03:22")).toBe(false);
  });
});
