import { describe, expect, it } from "vitest";
import { assertTaskId, isValidTaskId, makeTaskId } from "../../src/protocol/ids.js";
import { LineBuffer, parseJsonLine } from "../../src/protocol/jsonl.js";
import { makeCaesarEnv, taskDirIn } from "../../src/protocol/task-dir.js";

describe("task ids", () => {
  it("refuse anything that could escape the task store", () => {
    for (const bad of ["", "../x", "/abs", "a/b", "..", ".hidden", "a..b", "x".repeat(129), "a\0b", " t"]) {
      expect(isValidTaskId(bad), bad).toBe(false);
      expect(() => taskDirIn("/store", bad)).toThrow(/Invalid task id/);
    }
  });

  it("accept generated and spec-style ids", () => {
    expect(isValidTaskId("t_7f3a")).toBe(true);
    const id = makeTaskId();
    expect(id).toMatch(/^t_[0-9a-f]{8}$/);
    expect(assertTaskId(id)).toBe(id);
  });
});

describe("the CAESAR_* environment", () => {
  it("names the eight variables of the spec", () => {
    const env = makeCaesarEnv({ dir: "/p/.caesar/tasks/t_1", taskId: "t_1", agent: "codex", depth: 0 });
    expect(env).toEqual({
      CAESAR_TASK_DIR: "/p/.caesar/tasks/t_1",
      CAESAR_TASK_FILE: "/p/.caesar/tasks/t_1/task.json",
      CAESAR_REPORT_PATH: "/p/.caesar/tasks/t_1/report.json",
      CAESAR_EVENTS_PATH: "/p/.caesar/tasks/t_1/events.jsonl",
      CAESAR_TASK_ID: "t_1",
      CAESAR_AGENT: "codex",
      CAESAR_DEPTH: "0",
      CAESAR_PROTOCOL_VERSION: "1",
    });
  });
});

describe("LineBuffer", () => {
  it("reassembles lines split across chunks and strips \\r", () => {
    const buffer = new LineBuffer();
    expect(buffer.push('{"a":')).toEqual([]);
    expect(buffer.push('1}\r\n{"b"')).toEqual(['{"a":1}']);
    expect(buffer.push(":2}\n\n")).toEqual(['{"b":2}', ""]);
    expect(buffer.rest).toBe("");
  });

  it("keeps a half-written last line pending instead of failing", () => {
    const buffer = new LineBuffer();
    buffer.push('{"a":1}\n{"b":');
    expect(buffer.rest).toBe('{"b":');
    expect(buffer.flush()).toEqual(['{"b":']);
  });

  it("drops a line longer than the cap without growing memory, then resumes", () => {
    const buffer = new LineBuffer(10);
    expect(buffer.push("x".repeat(8))).toEqual([]);
    expect(buffer.push("y".repeat(8))).toEqual([]);
    expect(buffer.push("zz\nok\n")).toEqual(["ok"]);
    expect(buffer.dropped).toBe(1);
  });

  it("parses JSON lines and ignores the rest", () => {
    expect(parseJsonLine('{"x":1}')).toEqual({ x: 1 });
    expect(parseJsonLine("Reading additional input from stdin...")).toBeUndefined();
    expect(parseJsonLine("{not json")).toBeUndefined();
  });
});
