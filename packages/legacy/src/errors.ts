import { isTaskError, type JsonRpcErrorObject, type TaskErrorCode } from "@mcp-tasks/core";

/** JSON-RPC error codes this facade answers with (2025-11-25 §Error Handling). */
export const JSONRPC = Object.freeze({
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** Implementation-defined server error: used for a full store (a retryable condition). */
  SERVER_ERROR: -32000,
});

/**
 * The one place where the core's closed {@link TaskErrorCode} vocabulary becomes JSON-RPC
 * codes for the 2025-11-25 era. Missing and foreign tasks share `-32602`, so an id never
 * reveals whether another owner's task exists.
 */
const CODE_OF: Readonly<Record<TaskErrorCode, number>> = Object.freeze({
  not_found_or_unauthorized: JSONRPC.INVALID_PARAMS,
  invalid_cursor: JSONRPC.INVALID_PARAMS,
  invalid_transition: JSONRPC.INVALID_PARAMS,
  invalid_task: JSONRPC.INVALID_PARAMS,
  ttl_out_of_range: JSONRPC.INVALID_PARAMS,
  store_full: JSONRPC.SERVER_ERROR,
  already_exists: JSONRPC.INTERNAL_ERROR,
  store_unavailable: JSONRPC.INTERNAL_ERROR,
});

/**
 * An error answered as a JSON-RPC error response. Its shape (`code`, `message`, `data`) is
 * what `@modelcontextprotocol/server` reads from anything a request handler throws.
 */
export class LegacyRpcError extends Error {
  override readonly name = "LegacyRpcError";
  readonly code: number;
  readonly data?: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    if (data !== undefined) this.data = data;
  }

  /** The JSON-RPC error object. */
  toJSON(): JsonRpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }

  static from(error: JsonRpcErrorObject): LegacyRpcError {
    return new LegacyRpcError(error.code, error.message, error.data);
  }
}

/** The JSON-RPC code the 2025-11-25 facade uses for a core error code. */
export function jsonRpcCodeOf(code: TaskErrorCode): number {
  return CODE_OF[code];
}

/**
 * Turns anything thrown while serving a request into a {@link LegacyRpcError}: task errors
 * by the table above, our own errors unchanged, anything else `-32603` without details.
 */
export function toLegacyRpcError(error: unknown): LegacyRpcError {
  if (error instanceof LegacyRpcError) return error;
  if (isTaskError(error)) return new LegacyRpcError(jsonRpcCodeOf(error.code), error.message);
  return new LegacyRpcError(JSONRPC.INTERNAL_ERROR, "Internal error");
}

/** Runs `fn`, rethrowing failures as {@link LegacyRpcError}s. */
export async function rpc<T>(fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw toLegacyRpcError(error);
  }
}
