import {
  type FailureReporter,
  failureMapping,
  type JsonRpcErrorObject,
  RpcError,
  type TaskError,
  type TaskErrorCode,
} from "@mcp-tasks/core";
import { ProtocolErrorCode } from "@modelcontextprotocol/server";
import type { z } from "zod";

/**
 * The one place where the core's closed {@link TaskErrorCode} vocabulary becomes JSON-RPC
 * codes for the 2025-11-25 era. Missing and foreign tasks share `-32602`, so an id never
 * reveals whether another owner's task exists.
 *
 * `store_full` and `store_unavailable` are `-32603` on purpose. It is the one server-side
 * code this era's spec documents (§1.15 "Internal error"), and the 2026-07-28 facade uses
 * the same. `-32000` (used for `store_full` before) is what `@modelcontextprotocol/sdk`
 * 1.x clients raise themselves for a closed connection (`ErrorCode.ConnectionClosed`), so
 * such a client would read a full store as a dropped connection; and `-32000…-32099` is
 * where MCP allocates its own codes. What happened is in `data.reason` (`"store_full"`
 * with `data.quota` and `data.limit`; `"store_unavailable"` with `data.retryAfterMs`).
 */
const CODE_OF: Readonly<Record<TaskErrorCode, number>> = Object.freeze({
  not_found_or_unauthorized: ProtocolErrorCode.InvalidParams,
  invalid_cursor: ProtocolErrorCode.InvalidParams,
  invalid_transition: ProtocolErrorCode.InvalidParams,
  invalid_task: ProtocolErrorCode.InvalidParams,
  ttl_out_of_range: ProtocolErrorCode.InvalidParams,
  store_full: ProtocolErrorCode.InternalError,
  already_exists: ProtocolErrorCode.InternalError,
  store_unavailable: ProtocolErrorCode.InternalError,
  lease_lost: ProtocolErrorCode.InternalError,
});

const FAILURES = failureMapping(CODE_OF);

/** The JSON-RPC code the 2025-11-25 facade uses for a core error code. */
export function jsonRpcCodeOf(code: TaskErrorCode): number {
  return CODE_OF[code];
}

/**
 * A task error as a 2025-11-25 client sees it: the code from the table above; for the
 * `-32603` ones a message and `data` fit for clients (`store_unavailable`'s detail names
 * the database: it goes to `report` instead, and the client is told to retry).
 */
export function legacyTaskError(error: TaskError, report?: FailureReporter): JsonRpcErrorObject {
  return FAILURES.failure(error, report);
}

/**
 * What a 2025-11-25 client is answered when serving its request failed (core's one policy
 * over the table above): our own {@link RpcError}s unchanged, task errors by
 * {@link legacyTaskError}, anything else `-32603` without details (no stack, SQL or path
 * reaches a client; `report` gets it).
 */
export const legacyFailure = FAILURES.failure;

/**
 * What a tool body threw while answering synchronously: our errors as in
 * {@link legacyFailure}, the tool's own JSON-RPC errors (an integer `code`) as they are.
 */
export const legacyToolFailure = FAILURES.toolFailure;

/** `-32602` for params that do not parse, naming every problem. */
export function invalidParams(method: string, error: z.ZodError): RpcError {
  const problems = error.issues.map((i) => `${i.path.join(".") || "params"}: ${i.message}`);
  return new RpcError(
    ProtocolErrorCode.InvalidParams,
    `Invalid params for ${method}: ${problems.join("; ")}`,
  );
}

/** `-32601` for a call the tool's task support rules out. */
export function taskSupportMismatch(message: string): RpcError {
  return new RpcError(ProtocolErrorCode.MethodNotFound, message);
}

/** `-32603` with a message a client may see. */
export function internalError(message: string, data?: unknown): RpcError {
  return new RpcError(ProtocolErrorCode.InternalError, message, data);
}
