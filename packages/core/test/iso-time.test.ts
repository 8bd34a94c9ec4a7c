import { describe, expect, it } from "vitest";
import { isoTime } from "../src/index.js";

describe("isoTime", () => {
  it("formats as Date#toISOString does, also once the memo has been dropped", () => {
    for (const ms of [0, 1, 1_764_583_200_123, -1, 8.64e15]) {
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }
    // Past the bound the memo starts over; answers stay right.
    for (let i = 0; i < 5000; i++)
      expect(isoTime(1_000_000 + i)).toBe(new Date(1_000_000 + i).toISOString());
    expect(isoTime(0)).toBe("1970-01-01T00:00:00.000Z");
  });
});
