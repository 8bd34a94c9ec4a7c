import { describe, expect, it } from "vitest";
import { createIdGenerator, isTaskError } from "../src/index.js";
import { decodeSequenceCursor, encodeCursor, resolveTtl, ttlPolicy } from "../src/store-api.js";

describe("task ids", () => {
  it("are 128-bit, URL-safe and unique", () => {
    const next = createIdGenerator();
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const id = next();
      expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(20_000);
  });

  it("refuse fewer than 128 bits", () => {
    expect(() => createIdGenerator(8)).toThrow(RangeError);
  });
});

describe("cursors", () => {
  it("round-trip a sequence position", () => {
    for (const n of [0, 1, 42, 2 ** 40]) expect(decodeSequenceCursor(encodeCursor(n))).toBe(n);
  });

  it("reject anything not made by encodeCursor", () => {
    for (const bad of [
      "",
      "abc",
      "c1.",
      "c1.***",
      encodeCursor("-1"),
      encodeCursor("01"),
      encodeCursor("1e5"),
    ]) {
      let caught: unknown;
      try {
        decodeSequenceCursor(bad);
      } catch (error) {
        caught = error;
      }
      expect(isTaskError(caught, "invalid_cursor")).toBe(true);
    }
  });
});

describe("ttl policy", () => {
  const DAY = 86_400_000;

  it("grants the default when the client asks for none", () => {
    expect(resolveTtl(ttlPolicy({ defaultTtlMs: 5000 }), undefined)).toBe(5000);
  });

  it("clamps above the maximum, including an unlimited request", () => {
    const p = ttlPolicy({ defaultTtlMs: 1000, maxTtlMs: 2000 });
    expect(resolveTtl(p, 1500)).toBe(1500);
    expect(resolveTtl(p, 5000)).toBe(2000);
    expect(resolveTtl(p, null)).toBe(2000);
  });

  it("rejects above the maximum with ttl_out_of_range when configured to", () => {
    const p = ttlPolicy({ defaultTtlMs: 1000, maxTtlMs: 2000, onOutOfRange: "reject" });
    expect(() => resolveTtl(p, 2001)).toThrow(
      expect.objectContaining({ code: "ttl_out_of_range" }),
    );
    expect(() => resolveTtl(p, null)).toThrow(
      expect.objectContaining({ code: "ttl_out_of_range" }),
    );
  });

  it("grants unlimited retention only without a maximum", () => {
    expect(resolveTtl(ttlPolicy({ defaultTtlMs: null, maxTtlMs: null }), null)).toBeNull();
  });

  it("handles ttls far beyond the 32-bit timer limit", () => {
    expect(resolveTtl(ttlPolicy(), 30 * DAY)).toBe(30 * DAY);
  });

  it("refuses non-integer and non-positive requests with invalid_task", () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() => resolveTtl(ttlPolicy(), bad)).toThrow(
        expect.objectContaining({ code: "invalid_task" }),
      );
    }
  });

  it("refuses inconsistent settings", () => {
    expect(() => ttlPolicy({ defaultTtlMs: 5000, maxTtlMs: 1000 })).toThrow(RangeError);
    expect(() => ttlPolicy({ defaultTtlMs: -1 })).toThrow(RangeError);
  });
});
