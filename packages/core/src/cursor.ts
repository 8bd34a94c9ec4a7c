import { taskErrors } from "./errors.js";

/*
 * Cursors are opaque to clients but need not be secret: a cursor is a position in
 * creation order, so it stays valid when other tasks are inserted or deleted, and it grants
 * nothing, since every page is still filtered by the caller's owner scope.
 */

const PREFIX = "c1.";

/** Encodes a keyset position (a store's creation sequence number) as an opaque cursor. */
export function encodeCursor(position: number | bigint | string): string {
  return PREFIX + Buffer.from(String(position), "utf8").toString("base64url");
}

/** Decodes a cursor made by {@link encodeCursor}; throws `invalid_cursor` for anything else. */
export function decodeCursor(cursor: string): string {
  if (typeof cursor !== "string" || !cursor.startsWith(PREFIX) || cursor.length > 200) {
    throw taskErrors.invalidCursor();
  }
  const body = cursor.slice(PREFIX.length);
  if (!/^[A-Za-z0-9_-]+$/.test(body)) throw taskErrors.invalidCursor();
  return Buffer.from(body, "base64url").toString("utf8");
}

/** Decodes a cursor that must hold a non-negative integer position. */
export function decodeSequenceCursor(cursor: string): number {
  const text = decodeCursor(cursor);
  if (!/^(0|[1-9][0-9]{0,15})$/.test(text)) throw taskErrors.invalidCursor();
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw taskErrors.invalidCursor();
  return value;
}
