import { describe, expect, it } from "vitest";
import { isTaskError } from "../src/errors.js";
import { owner } from "../src/owner.js";
import { assertStorable, assertStorableOwner, unstorableTextAt } from "../src/storable.js";

function nested(depth: number, leaf: unknown): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

describe("the one rule for text (U+0000)", () => {
  it("finds U+0000 in strings and keys, with a JSON pointer", () => {
    expect(unstorableTextAt("a\u0000")).toBe("");
    expect(unstorableTextAt({ a: [1, { "b/c~": "\u0000" }] })).toBe("/a/1/b~1c~0");
    expect(unstorableTextAt({ "k\u0000": 1 })).toBe("/k\u0000");
    expect(unstorableTextAt({ a: "fine", b: [1, null, true, "x"] })).toBeUndefined();
  });

  it("is not fooled by text that merely spells the escape", () => {
    expect(unstorableTextAt({ a: "\\u0000" })).toBeUndefined();
    expect(unstorableTextAt(nested(100, "\\u0000"))).toBeUndefined();
  });

  it("finds U+0000 past the walk's depth too", () => {
    expect(unstorableTextAt(nested(100, "x\u0000"))).toBeDefined();
    expect(unstorableTextAt(nested(100, "x"))).toBeUndefined();
  });

  it("leaves what JSON cannot write to the store's own refusal", () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(unstorableTextAt(nested(70, cycle))).toBeUndefined();
  });

  it("throws invalid_task naming the value, the character and where", () => {
    let thrown: unknown;
    try {
      assertStorable("the arguments", { text: "a\u0000" });
    } catch (error) {
      thrown = error;
    }
    expect(isTaskError(thrown, "invalid_task")).toBe(true);
    expect((thrown as Error).message).toBe(
      "Invalid task: the arguments hold the character U+0000 at /text, which task stores cannot keep; remove it or encode it (e.g. base64)",
    );
    expect(() => assertStorable("the status message", null)).not.toThrow();
    expect(() => assertStorableOwner(owner({ principalId: "a\u0000" }))).toThrow(/principalId/);
    expect(() => assertStorableOwner(owner({ principalId: "alice" }))).not.toThrow();
  });
});
