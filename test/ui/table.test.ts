import { describe, expect, it } from "vitest";
import { formatColumns } from "../../src/ui/columns.js";
import { type Column, renderTable } from "../../src/ui/table.js";
import { displayWidth, stripAnsi } from "../../src/ui/text.js";
import { makeTheme } from "../../src/ui/theme.js";

const columns: Column[] = [
  { header: "ID" },
  { header: "AGENT" },
  { header: "STATUS" },
  { header: "OBJECTIVE", flex: true },
];
const rows = [
  [
    "t_7f3a9c21",
    "codex",
    { text: "success", role: "ok" as const },
    "Fix the flaky login test in test/auth/login.test.ts",
  ],
  [
    "t_c1a0de55",
    "claude",
    { text: "running", role: "active" as const },
    "Add a response cache to the API client",
  ],
];
const utf8 = makeTheme({ color: 0, unicode: true });
const ascii = makeTheme({ color: 0, unicode: false });

describe("tables", () => {
  it("draw a frame when it fits", () => {
    expect(renderTable(columns, rows, { theme: utf8, width: 100 })).toEqual([
      "┌────────────┬────────┬─────────┬─────────────────────────────────────────────────────┐",
      "│ ID         │ AGENT  │ STATUS  │ OBJECTIVE                                           │",
      "├────────────┼────────┼─────────┼─────────────────────────────────────────────────────┤",
      "│ t_7f3a9c21 │ codex  │ success │ Fix the flaky login test in test/auth/login.test.ts │",
      "│ t_c1a0de55 │ claude │ running │ Add a response cache to the API client              │",
      "└────────────┴────────┴─────────┴─────────────────────────────────────────────────────┘",
    ]);
  });

  it("draw an ASCII frame of the same shape in a non-UTF-8 locale", () => {
    const unicode = renderTable(columns, rows, { theme: utf8, width: 100 });
    const plain = renderTable(columns, rows, { theme: ascii, width: 100 });
    expect(plain[0]).toBe(
      "+------------+--------+---------+-----------------------------------------------------+",
    );
    expect(plain[3]).toBe(
      "| t_7f3a9c21 | codex  | success | Fix the flaky login test in test/auth/login.test.ts |",
    );
    expect(plain.map(displayWidth)).toEqual(unicode.map(displayWidth));
  });

  it("cut the flexible column to keep the frame inside the width", () => {
    const lines = renderTable(columns, rows, { theme: utf8, width: 60 });
    expect(lines[0]!.startsWith("┌")).toBe(true);
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(60);
    expect(lines[3]).toBe("│ t_7f3a9c21 │ codex  │ success │ Fix the flaky login tes… │");
  });

  it("fall back to aligned columns when no frame can fit, never wrapping a border", () => {
    // The frame needs 13 columns of borders and padding, the fixed columns 23, OBJECTIVE at least 9: 45.
    expect(renderTable(columns, rows, { theme: utf8, width: 45 })[0]).toMatch(/^┌/);
    const lines = renderTable(columns, rows, { theme: utf8, width: 40 });
    expect(lines.join("\n")).not.toMatch(/[│┌└├]/);
    expect(lines).toEqual([
      "ID          AGENT   STATUS   OBJECTIVE",
      "t_7f3a9c21  codex   success  Fix the fl…",
      "t_c1a0de55  claude  running  Add a resp…",
    ]);
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(40);
  });

  it("colour only the cells that classify, and never the frame", () => {
    const lines = renderTable(columns, rows, { theme: makeTheme({ color: 1, unicode: true }), width: 100 });
    expect(lines[0]).not.toContain("\x1b");
    expect(lines[3]).toContain("\x1b[32msuccess\x1b[0m");
    expect(lines[3]).toContain("│ t_7f3a9c21 │ codex  │");
    expect(stripAnsi(lines[3]!)).toBe(
      "│ t_7f3a9c21 │ codex  │ success │ Fix the flaky login test in test/auth/login.test.ts │",
    );
  });
});

describe("unframed columns", () => {
  it("align by display columns, so a wide name does not push its row out of line", () => {
    const rows = [
      ["日本", "wide"],
      ["ab", "narrow"],
    ];
    expect(formatColumns(["ID", "NOTE"], rows)).toBe("ID    NOTE\n日本  wide\nab    narrow");
  });
});
