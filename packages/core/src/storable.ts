import { taskErrors } from "./errors.js";
import type { Owner } from "./owner.js";

/**
 * The one rule for what text every store keeps. PostgreSQL cannot store U+0000 in `text`
 * or `jsonb`, and the memory store could; rather than let the same task live in one store
 * and fail in another with a database message, every store refuses such values before any
 * write, with `invalid_task` (JSON-RPC -32602 in both eras) and the same words.
 */

/** The one character no task store keeps. */
export const UNSTORABLE_CHARACTER = "\u0000";

/** True when `text` holds U+0000. */
export function holdsUnstorableText(text: string): boolean {
  return text.includes(UNSTORABLE_CHARACTER);
}

/** `\u0000` in JSON text, not preceded by an escaped backslash (`\\u0000` is no U+0000). */
const ESCAPED_NUL = /(?:^|[^\\])(?:\\\\)*\\u0000/;

/** Deeper than this is left to `JSON.stringify`'s text, which escapes U+0000 as `\u0000`. */
const MAX_WALK_DEPTH = 64;

/**
 * Where in `value` (a JSON value) a string or an object key holds U+0000, as a JSON pointer
 * (`""` for the value itself), or `undefined` when none does.
 */
export function unstorableTextAt(value: unknown): string | undefined {
  return find(value, 0);
}

/**
 * Where in `value` a string or key holds U+0000, as a JSON pointer relative to `value`. The
 * pointer is built on the way back from a find only: built for every key visited, it cost
 * ~2 % of a task-creating `tools/call` on the memory store.
 */
function find(value: unknown, depth: number): string | undefined {
  if (typeof value === "string") return holdsUnstorableText(value) ? "" : undefined;
  if (typeof value !== "object" || value === null) return undefined;
  if (depth >= MAX_WALK_DEPTH) {
    // Past the walk's depth, the serialised text answers (without a precise path). What
    // cannot be serialised is refused by the store as not JSON, not here.
    let text: string | undefined;
    try {
      text = JSON.stringify(value);
    } catch {
      return undefined;
    }
    return text !== undefined && ESCAPED_NUL.test(text) ? "" : undefined;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const at = find(value[i], depth + 1);
      if (at !== undefined) return `/${i}${at}`;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (holdsUnstorableText(key)) return `/${pointerToken(key)}`;
    const at = find((value as Record<string, unknown>)[key], depth + 1);
    if (at !== undefined) return `/${pointerToken(key)}${at}`;
  }
  return undefined;
}

/** `key` as a JSON pointer reference token (RFC 6901: `~` as `~0`, `/` as `~1`). */
function pointerToken(key: string): string {
  return key.replaceAll("~", "~0").replaceAll("/", "~1");
}

/**
 * Throws `invalid_task` when `value` holds U+0000 anywhere (strings and keys). `what` names
 * the value for the message, e.g. "the arguments".
 */
export function assertStorable(what: string, value: unknown): void {
  const at = unstorableTextAt(value);
  if (at !== undefined) throw taskErrors.unstorableText(what, at);
}

/** Throws `invalid_task` when a part of `owner` holds U+0000: no store could key it. */
export function assertStorableOwner(owner: Owner): void {
  for (const part of ["principalId", "tenantId", "audience"] as const) {
    const value = owner[part];
    if (value !== null && holdsUnstorableText(value)) {
      throw taskErrors.unstorableText(`the owner's ${part}`, "");
    }
  }
}
