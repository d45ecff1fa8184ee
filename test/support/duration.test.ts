import { describe, expect, it } from "vitest";
import { formatDuration, parseDuration } from "../../src/support/duration.js";

describe("durations", () => {
  it("parse units and refuse bare numbers", () => {
    expect(parseDuration("1h30m")).toBe(5_400_000);
    expect(parseDuration("1500ms")).toBe(1500);
    expect(parseDuration("0.5s")).toBe(500);
    expect(() => parseDuration("600")).toThrow(/Invalid duration/);
    expect(() => parseDuration("10 minutes")).toThrow(/Invalid duration/);
    expect(formatDuration(61_000)).toBe("1m01s");
  });
});
