import { failureMapping, RpcError, type TaskErrorCode } from "@mcp-tasks/core";
import { ProtocolErrorCode } from "@modelcontextprotocol/server";
import { TASKS_EXTENSION_ID } from "./constants.js";

/** The JSON-RPC error codes this facade answers with: the SDK's, and the routing header's. */
export const RPC_ERROR = Object.freeze({
  PARSE_ERROR: ProtocolErrorCode.ParseError,
  INVALID_REQUEST: ProtocolErrorCode.InvalidRequest,
  METHOD_NOT_FOUND: ProtocolErrorCode.MethodNotFound,
  INVALID_PARAMS: ProtocolErrorCode.InvalidParams,
  INTERNAL_ERROR: ProtocolErrorCode.InternalError,
  /** `Mcp-Name` disagrees with the body (2026-07-28 HTTP transport). */
  HEADER_MISMATCH: -32020,
  MISSING_REQUIRED_CLIENT_CAPABILITY: ProtocolErrorCode.MissingRequiredClientCapability,
} as const);

/**
 * The one place where core's closed {@link TaskErrorCode} vocabulary becomes JSON-RPC codes
 * on the 2026-07-28 wire. A missing task and another owner's task are indistinguishable
 * (`-32602` with the same words), so task ids cannot be probed.
 *
 * `store_full` and `store_unavailable` are `-32603` on purpose: it is the one server-side
 * error code this era's spec documents (§2.13 "Internal error"), the 2025-11-25 facade
 * uses the same, and the `-32000…-32099` range is where MCP allocates its own codes
 * (`-32020…-32022` now, `-32001…-32004` in drafts), so an invented code there could
 * collide later. What happened is in `data.reason` (`"store_full"` with `data.quota` and
 * `data.limit`; `"store_unavailable"` with `data.retryAfterMs`), the same in both eras.
 */
const TASK_ERROR_TO_RPC: Readonly<Record<TaskErrorCode, number>> = Object.freeze({
  not_found_or_unauthorized: RPC_ERROR.INVALID_PARAMS,
  invalid_task: RPC_ERROR.INVALID_PARAMS,
  ttl_out_of_range: RPC_ERROR.INVALID_PARAMS,
  invalid_cursor: RPC_ERROR.INVALID_PARAMS,
  invalid_transition: RPC_ERROR.INVALID_PARAMS,
  already_exists: RPC_ERROR.INTERNAL_ERROR,
  store_full: RPC_ERROR.INTERNAL_ERROR,
  store_unavailable: RPC_ERROR.INTERNAL_ERROR,
  lease_lost: RPC_ERROR.INTERNAL_ERROR,
});

const FAILURES = failureMapping(TASK_ERROR_TO_RPC);

/**
 * Maps a failure of the task core or store to the JSON-RPC error object the client sees
 * (core's one policy over this era's table): a core `TaskError` by the table above,
 * anything unexpected a bare `-32603 Internal error`; `store_unavailable` becomes a plain
 * "retry" message with `data.retryAfterMs`. Detail clients do not get goes to `report`.
 */
export const taskFailureToRpc = FAILURES.failure;

/**
 * Maps what a tool body threw while answering synchronously: store failures as in
 * {@link taskFailureToRpc}, the tool's own JSON-RPC errors (an integer `code`) as they are.
 */
export const toolFailureToRpc = FAILURES.toolFailure;

/** `-32021`: the request needs the tasks extension declared on this very request. */
export function missingTasksExtension(detail: string): RpcError {
  return new RpcError(
    RPC_ERROR.MISSING_REQUIRED_CLIENT_CAPABILITY,
    `Missing required client capability: ${detail}`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID]: {} } } },
  );
}

/** `-32602` with a message. */
export function invalidParams(message: string): RpcError {
  return new RpcError(RPC_ERROR.INVALID_PARAMS, `Invalid params: ${message}`);
}

/** `-32601` for a method this facade does not serve. */
export function methodNotFound(method: string): RpcError {
  return new RpcError(RPC_ERROR.METHOD_NOT_FOUND, `Method not found: ${method}`);
}

/** `-32020`: the `Mcp-Name` routing header disagrees with the body. */
export function headerMismatch(header: string, body: string): RpcError {
  return new RpcError(
    RPC_ERROR.HEADER_MISMATCH,
    `Header mismatch: Mcp-Name is ${JSON.stringify(header)} but params.taskId is ${JSON.stringify(body)}`,
  );
}
