import type { InputResponse, TaskOutcome, TaskRecord } from "./task.js";

/**
 * Payload accounting for the per-owner byte quota (`maxBytesPerOwner`). A task's payload is
 * what a client (or its tool) makes the store keep until the ttl: the request's arguments,
 * the outcome (result or error) and every input answer. The measure is the UTF-8 length of
 * each value's `JSON.stringify` text, so every store counts the same bytes for the same task
 * (a SQL store computes it here and stores the number, never from its own JSON rendering).
 * It is additive (arguments + outcome + each answer), so a store can keep a running total
 * per task and per owner and add to it as each payload arrives.
 */

const NON_ASCII = /[\u0080-\uffff]/;

/** The UTF-8 byte length of a string, without allocating an encoded copy. */
export function utf8Length(text: string): number {
  // Most payloads are ASCII: one native scan answers them.
  if (!NON_ASCII.test(text)) return text.length;
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      // A surrogate pair is 4 bytes for 2 UTF-16 units.
      if (d >= 0xdc00 && d <= 0xdfff) {
        bytes += 2;
        i++;
      } else bytes += 2;
    } else bytes += 2;
  }
  return bytes;
}

/**
 * The payload bytes of one JSON value (0 for `undefined`, which is not stored): exactly
 * `utf8Length(JSON.stringify(value))`. Plain data (plain objects, arrays, strings, numbers,
 * booleans, null) is measured by a walk that builds no text, several times cheaper than
 * `JSON.stringify` for the small results most tools return, and the byte quota measures
 * every write; anything else (`toJSON`, class instances, boxed primitives, bigints, cycles,
 * very deep nesting) goes through `JSON.stringify` itself, so the answer and the errors
 * thrown are always its own.
 */
export function payloadBytes(value: unknown): number {
  const walked = plainJsonBytes(value, 0);
  if (walked >= 0) return walked;
  const text = JSON.stringify(value);
  return text === undefined ? 0 : utf8Length(text);
}

/** Deeper plain data than this is left to `JSON.stringify` (which also detects cycles). */
const MAX_WALK_DEPTH = 64;
/** Strings up to this length are scanned in JS; longer ones get one native regex test first. */
const SHORT_STRING = 64;
/** Anything `JSON.stringify` writes other than as itself: escapes and multi-byte UTF-8. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are escaped
const NOT_VERBATIM = /["\\\u0000-\u001f\u0080-\uffff]/;
const isRawJson = (JSON as { isRawJSON?: (value: unknown) => boolean }).isRawJSON;

/**
 * `utf8Length(JSON.stringify(value))` for plain data, `0` for what it leaves out
 * (`undefined`, functions, symbols), or `-1` when `value` needs `JSON.stringify` itself.
 */
function plainJsonBytes(value: unknown, depth: number): number {
  switch (typeof value) {
    case "string":
      return jsonStringBytes(value);
    case "number":
      return jsonNumberBytes(value);
    case "boolean":
      return value ? 4 : 5;
    case "undefined":
    case "function":
    case "symbol":
      return 0;
    case "object":
      break;
    default:
      // bigint: JSON.stringify throws, and should be the one to.
      return -1;
  }
  if (value === null) return 4;
  if (depth >= MAX_WALK_DEPTH) return -1;
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return -1;
  if (Array.isArray(value)) {
    const n = value.length;
    let bytes = n > 0 ? n + 1 : 2; // brackets and commas
    for (let i = 0; i < n; i++) {
      const item: unknown = value[i];
      const t = typeof item;
      if (t === "undefined" || t === "function" || t === "symbol") {
        bytes += 4; // written as null
        continue;
      }
      const b = plainJsonBytes(item, depth + 1);
      if (b < 0) return -1;
      bytes += b;
    }
    return bytes;
  }
  const proto = Object.getPrototypeOf(value);
  if ((proto !== Object.prototype && proto !== null) || isRawJson?.(value) === true) {
    return -1;
  }
  const record = value as Record<string, unknown>;
  let bytes = 2; // braces
  let written = 0;
  for (const key of Object.keys(record)) {
    const item = record[key];
    const t = typeof item;
    if (t === "undefined" || t === "function" || t === "symbol") continue;
    const b = plainJsonBytes(item, depth + 1);
    if (b < 0) return -1;
    bytes += jsonStringBytes(key) + 1 + b; // "key":value
    written++;
  }
  return written > 1 ? bytes + written - 1 : bytes; // commas
}

/** The UTF-8 bytes of `JSON.stringify(text)`: quotes, escapes, multi-byte characters. */
function jsonStringBytes(text: string): number {
  const n = text.length;
  if (n > SHORT_STRING && !NOT_VERBATIM.test(text)) return n + 2;
  let bytes = n + 2;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x20 && c < 0x80) {
      if (c === 0x22 || c === 0x5c) bytes += 1; // \" and \\
    } else if (c < 0x20) {
      // \b \t \n \f \r, else \u00XX
      bytes += c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 1 : 5;
    } else if (c < 0x800) bytes += 1;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const d = i + 1 < n ? text.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) {
        bytes += 2; // a pair: 4 bytes for 2 units
        i++;
      } else bytes += 5; // a lone surrogate is written \uXXXX
    } else if (c >= 0xdc00 && c <= 0xdfff) bytes += 5;
    else bytes += 2;
  }
  return bytes;
}

/** The length of `JSON.stringify(n)`: the shortest round-trip form, `null` when not finite. */
function jsonNumberBytes(n: number): number {
  if (Number.isInteger(n) && n >= 0 && n < 1e9) {
    // The common case without building a string.
    let digits = 1;
    for (let x = n; x >= 10; x = Math.floor(x / 10)) digits++;
    return digits;
  }
  return Number.isFinite(n) ? String(n).length : 4;
}

/** The payload bytes of a task's outcome (0 when it has none, e.g. cancelled). */
export function outcomeBytes(outcome: TaskOutcome | null): number {
  if (outcome === null) return 0;
  return payloadBytes(outcome.kind === "result" ? outcome.result : outcome.error);
}

/** The payload bytes of some input answers: the sum over their keys. */
export function answerBytes(answers: Readonly<Record<string, InputResponse>>): number {
  let total = 0;
  for (const key of Object.keys(answers)) total += payloadBytes(answers[key]);
  return total;
}

/**
 * The payload bytes a stored task holds: its arguments, its outcome and its input answers.
 * What a store counts against the owner's `maxBytesPerOwner` while the task is kept.
 */
export function taskPayloadBytes(
  task: Pick<TaskRecord, "request" | "outcome" | "inputAnswers">,
): number {
  return (
    payloadBytes(task.request.arguments) +
    outcomeBytes(task.outcome) +
    answerBytes(task.inputAnswers)
  );
}
