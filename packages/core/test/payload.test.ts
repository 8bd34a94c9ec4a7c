import { describe, expect, it } from "vitest";
import { payloadBytes, utf8Length } from "../src/payload.js";

/** The definition `payloadBytes` must match exactly. */
function stringifiedBytes(value: unknown): number {
  const text = JSON.stringify(value);
  return text === undefined ? 0 : Buffer.byteLength(text, "utf8");
}

/** A deterministic generator of JSON-ish values, tricky strings and numbers included. */
function generator(seed: number) {
  let x = seed >>> 0;
  const next = () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x / 2 ** 32;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const chars = [
    "a",
    "Z",
    " ",
    '"',
    "\\",
    "/",
    "\n",
    "\t",
    "\b",
    "\f",
    "\r",
    "\u0000",
    "\u001f",
    "\u007f",
    "\u0080",
    "é",
    "\u07ff",
    "\u0800",
    "€",
    "\uffff",
    "😀",
    "\ud800",
    "\udc00",
    "\u2028",
  ];
  const string = (): string => {
    const length = pick([0, 1, 3, 10, 63, 64, 65, 200]);
    let s = "";
    for (let i = 0; i < length; i++) s += next() < 0.7 ? "x" : pick(chars);
    return s;
  };
  const number = (): number =>
    pick([
      0,
      -0,
      1,
      9,
      10,
      999_999_999,
      1e9,
      -5,
      0.1,
      1 / 3,
      1e21,
      1e-7,
      -1e300,
      Number.MAX_SAFE_INTEGER,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Math.floor(next() * 1e12),
    ]);
  const value = (depth: number): unknown => {
    const r = next();
    if (depth > 4 || r < 0.35) {
      return pick([string, number, () => true, () => false, () => null, () => undefined])();
    }
    if (r < 0.6) return Array.from({ length: Math.floor(next() * 5) }, () => value(depth + 1));
    const out: Record<string, unknown> = {};
    const keys = Math.floor(next() * 5);
    for (let i = 0; i < keys; i++) out[next() < 0.2 ? String(i) : string()] = value(depth + 1);
    if (next() < 0.1) out.f = () => 1;
    return out;
  };
  return value;
}

describe("payloadBytes", () => {
  it("is the UTF-8 length of JSON.stringify for generated plain data", () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const value = generator(seed)(0);
      expect(payloadBytes(value), JSON.stringify(value)).toBe(stringifiedBytes(value));
    }
  });

  it("agrees with JSON.stringify on what it leaves to it", () => {
    class Point {
      x = 1;
      y = "é";
    }
    const boxed = [new Number(5), new String("ab\n"), new Boolean(false)];
    const values: unknown[] = [
      undefined,
      () => 1,
      Symbol("s"),
      new Date(0),
      { when: new Date(0), n: 1 },
      { toJSON: () => ({ replaced: "ü" }) },
      Object.assign([1, 2], { toJSON: () => "arr" }),
      new Point(),
      boxed,
      new Map([[1, 2]]),
      new Uint8Array([1, 2]),
      Object.create(null),
      Object.assign(Object.create(null), { a: "b" }),
      [undefined, () => 1, Symbol("s")],
      { a: undefined, b: () => 1, c: Symbol("c"), d: 1 },
      // biome-ignore lint/suspicious/noSparseArray: a hole is written as null
      [1, , 3],
      { "": "", "\u0000": "\ud83d", "\n": ["\udc00x"] },
    ];
    let deep: unknown = "bottom";
    for (let i = 0; i < 200; i++) deep = i % 2 === 0 ? [deep] : { d: deep };
    values.push(deep);
    for (const value of values) expect(payloadBytes(value)).toBe(stringifiedBytes(value));
  });

  it("throws what JSON.stringify throws", () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => payloadBytes(cycle)).toThrow(TypeError);
    expect(() => payloadBytes({ big: 1n })).toThrow(TypeError);
  });

  it("counts long strings, verbatim or not", () => {
    for (const text of ["x".repeat(10_000), `${"x".repeat(5000)}é"\n😀`]) {
      expect(payloadBytes({ text })).toBe(stringifiedBytes({ text }));
      expect(utf8Length(text)).toBe(Buffer.byteLength(text, "utf8"));
    }
  });
});
