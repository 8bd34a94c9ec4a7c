import { isTaskError, type TaskError } from "@mcp-tasks/core";
import { taskErrors } from "@mcp-tasks/core/store";
import { UNREACHABLE_CODE } from "./reachability.js";

/** Node, postgres.js and node-postgres error codes that mean "the database cannot be reached". */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  // Ours: a statement gave up waiting for a connection while connects were being refused.
  UNREACHABLE_CODE,
]);

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "";
}

/** True for errors that say the database is unreachable, shutting down or overloaded. */
export function isConnectionError(error: unknown): boolean {
  const code = codeOf(error);
  if (CONNECTION_CODES.has(code)) return true;
  // SQLSTATE 08: connection exception; 57P01-57P05: admin shutdown, crash shutdown, cannot
  // connect now, database dropped, idle session timeout; 57014: statement timeout;
  // 53300: too many connections.
  if (/^08...$/.test(code) || /^57P0.$/.test(code) || code === "57014" || code === "53300") {
    return true;
  }
  const message = error instanceof Error ? error.message : "";
  // PGlite, and node-postgres (whose own errors carry no code): a lost or closed client, a
  // pool that gave up waiting for a connection or was ended.
  return /PGlite is closed|closed database|Connection terminated|not queryable|timeout exceeded when trying to connect|pool after calling end/i.test(
    message,
  );
}

/**
 * Whether a statement failed because the prepared statement it executes does not exist on
 * its connection (26000, invalid_sql_statement_name): a locked script's `prepared` form on
 * a connection that has not prepared it yet (see `plans/locked.ts`), or a PGlite statement
 * deallocated by someone else (`pglite-statements.ts`). Nothing ran.
 */
export function isNotPrepared(error: unknown): boolean {
  return codeOf(error) === "26000";
}

/**
 * Whether a statement named a table (42P01, undefined_table) or a column (42703,
 * undefined_column) the database does not have: a schema not migrated, or migrated for an
 * older release (see `table-check.ts`).
 */
export function isMissingTableOrColumn(error: unknown): boolean {
  const code = codeOf(error);
  return code === "42P01" || code === "42703";
}

/**
 * Whether a prepared statement may have failed because its result type changed since it was
 * prepared (a migration altered its table): PostgreSQL then says "cached plan must not
 * change result type", as 0A000 (feature_not_supported). Nothing ran; prepared again, it
 * runs (a statement refused for another unsupported feature fails again the same way).
 */
export function isStaleStatement(error: unknown): boolean {
  return codeOf(error) === "0A000";
}

/**
 * Turns what a driver threw into the closed error vocabulary. Connectivity problems become
 * `store_unavailable` with a message naming the cause; data the database refused (class 22,
 * e.g. a NUL character in a string) is the caller's `invalid_task`. Anything else is a bug
 * and is rethrown as it is.
 */
export function mapDriverError(error: unknown, operation: string): Error {
  if (isTaskError(error)) return error as TaskError;
  const code = codeOf(error);
  const message = error instanceof Error ? error.message : String(error);
  if (isConnectionError(error)) {
    return taskErrors.storeUnavailable(
      `${operation} could not reach PostgreSQL (${code || "connection error"}: ${message})`,
      error,
    );
  }
  // Class 22 (data exception) and 23514 (a check constraint, e.g. an unknown era).
  if (code.startsWith("22") || code === "23514") {
    return taskErrors.invalidTask(`the database refused a value (${message})`);
  }
  return error instanceof Error ? error : new Error(message);
}
