import {
  isTaskError,
  type JsonRpcErrorObject,
  RpcError,
  type TaskErrorCode,
  toJsonRpcError,
} from "@mcp-tasks/core";
import { ProtocolErrorCode } from "@modelcontextprotocol/server";
import type { z } from "zod";

/** Implementation-defined server error: used for a full store (a retryable condition). */
const SERVER_ERROR = -32000;

/**
 * The one place where the core's closed {@link TaskErrorCode} vocabulary becomes JSON-RPC
 * codes for the 2025-11-25 era. Missing and foreign tasks share `-32602`, so an id never
 * reveals whether another owner's task exists.
 */
const CODE_OF: Readonly<Record<TaskErrorCode, number>> = Object.freeze({
  not_found_or_unauthorized: ProtocolErrorCode.InvalidParams,
  invalid_cursor: ProtocolErrorCode.InvalidParams,
  invalid_transition: ProtocolErrorCode.InvalidParams,
  invalid_task: ProtocolErrorCode.InvalidParams,
  ttl_out_of_range: ProtocolErrorCode.InvalidParams,
  store_full: SERVER_ERROR,
  already_exists: ProtocolErrorCode.InternalError,
  store_unavailable: ProtocolErrorCode.InternalError,
  lease_lost: ProtocolErrorCode.InternalError,
});

/** The JSON-RPC code the 2025-11-25 facade uses for a core error code. */
export function jsonRpcCodeOf(code: TaskErrorCode): number {
  return CODE_OF[code];
}

/**
 * What a 2025-11-25 client is answered when serving its request failed: our own
 * {@link RpcError}s unchanged, task errors by the table above, anything else `-32603`
 * without details (no stack, SQL or path reaches a client).
 */
export function legacyFailure(error: unknown): JsonRpcErrorObject {
  if (error instanceof RpcError) return error.toJSON();
  if (isTaskError(error)) return { code: jsonRpcCodeOf(error.code), message: error.message };
  return { code: ProtocolErrorCode.InternalError, message: "Internal error" };
}

/**
 * What a tool body threw while answering synchronously: our errors as in
 * {@link legacyFailure}, the tool's own JSON-RPC errors (an integer `code`) as they are.
 */
export function legacyToolFailure(error: unknown): JsonRpcErrorObject {
  if (error instanceof RpcError || isTaskError(error)) return legacyFailure(error);
  return toJsonRpcError(error);
}

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
