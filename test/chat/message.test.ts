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
    expect(text).toContain('title: Converge: "schema" v0.2 #12\n');
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

  it("reads what other writers produce: CRLF, a BOM, flow lists, quoted names, extra keys", () => {
    const text =
      "\uFEFF---\r\nseq: 3\r\nfrom: \"Bob\"\r\nto: [alice, 'carol']\r\nchannel: c\r\nts: 2026-01-01T00:00:00Z\r\ntitle: 'It''s done'\r\npriority:high\r\n---\r\nbody\r\n";
    const parsed = parseMessage(text, "0003-bob-done.md", 3, "c");
    expect(parsed).toMatchObject({
      ok: true,
      message: {
        from: "Bob",
        to: ["alice", "carol"],
        // A title is text, read as chat.py reads it: quotes and all.
        title: "'It''s done'",
        extra: { priority: "high" },
        body: "body\n",
      },
    });
  });

  it("reads a frontmatter line as chat.py does: split at the first ':', the last of a key wins", () => {
    const parsed = parseMessage(
      "---\nseq: 4\nfrom: alice\ntitle: first\ntitle: Time: 10:30\n---\n",
      "0004-alice-x.md",
      4,
      "c",
    );
    expect(parsed).toMatchObject({ ok: true, message: { title: "Time: 10:30" } });
  });

  it("never throws on a malformed file, and says what is wrong", () => {
    const cases: [string, RegExp][] = [
      ["no frontmatter at all", /does not start/],
      ["---\nseq: 1\nfrom: a\ntitle: never closed\n", /no closing/],
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
    // No `from`: delivered all the same (chat.py does), with a warning.
    const anonymous = parseMessage("---\nseq: 1\ntitle: who?\n---\n", "0001-x-y.md", 1, "c");
    expect(anonymous).toMatchObject({
      ok: true,
      message: { from: "", warnings: ["no `from` field", expect.anything(), expect.anything()] },
    });
  });

  it("writes values plain, as chat.py reads them: never quoted, one line", () => {
    expect(formatValue("plain title")).toBe("plain title");
    expect(formatValue("no")).toBe("no");
    expect(formatValue("fix #12: a: b")).toBe("fix #12: a: b");
    expect(formatValue("Status\nfrom: mallory\r\nto: eve")).toBe("Status from: mallory to: eve");
    const text = formatMessage({
      seq: 1,
      from: "no",
      to: ["on", "yes"],
      channel: "c",
      status: "null",
      title: '"quoted"',
      body: "",
    });
    expect(text).toContain("\nfrom: no\nto: on, yes\n");
    expect(parseFrontmatter(text)).toMatchObject({
      ok: true,
      fields: { from: "no", to: "on, yes", title: '"quoted"' },
    });
  });
});

describe("recipients and relevance", () => {
  it("reads broadcast as absent, all or *", () => {
    expect(parseRecipients(undefined)).toEqual(["all"]);
    expect(parseRecipients("")).toEqual(["all"]);
    expect(parseRecipients("*")).toEqual(["all"]);
    expect(parseRecipients("[]")).toEqual(["all"]);
    expect(parseRecipients("all   # everyone")).toEqual(["all"]);
    expect(parseRecipients("bob,carol")).toEqual(["bob", "carol"]);
    expect(parseRecipients("Alice Smith, bob")).toEqual(["Alice Smith", "bob"]);
    // As chat.py: only these spellings are a broadcast; `ALL` is someone's name.
    expect(parseRecipients("ALL")).toEqual(["ALL"]);
    // Older caesar versions quoted names a YAML reader would misread.
    expect(parseRecipients('"on"')).toEqual(["on"]);
  });

  it("is relevant when broadcast or addressed, never when it is one's own", () => {
    expect(isRelevantTo({ from: "alice", to: ["all"] }, "bob")).toBe(true);
    expect(isRelevantTo({ from: "alice", to: ["Bob"] }, "Bob")).toBe(true);
    // Names compare exactly, as in chat.py, so both tools deliver the same messages.
    expect(isRelevantTo({ from: "alice", to: ["Bob"] }, "bob")).toBe(false);
    expect(isRelevantTo({ from: "alice", to: ["carol"] }, "bob")).toBe(false);
    expect(isRelevantTo({ from: "bob", to: ["all"] }, "bob")).toBe(false);
    expect(isRelevantTo({ from: "null", to: ["all"] }, "null")).toBe(false);
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
