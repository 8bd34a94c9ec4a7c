import { clientViewOf, isTaskError, type TaskErrorCode } from "./errors.js";
import { toJsonRpcError } from "./run-outcome.js";
import { INTERNAL_ERROR_CODE, type JsonRpcErrorObject } from "./task.js";

/**
 * A JSON-RPC error to answer a request with: the one error type of both era facades. Its
 * `code`, `message` and `data` are what `@modelcontextprotocol/server` reads from anything
 * a request handler throws, so it can also be thrown straight through an SDK binding.
 */
export class RpcError extends Error {
  override readonly name = "RpcError";
  readonly code: number;
  readonly data?: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    if (data !== undefined) this.data = data;
  }

  /** The wire error object. */
  toJSON(): JsonRpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }

  /** The error a wire error object describes. */
  static from(error: JsonRpcErrorObject): RpcError {
    return new RpcError(error.code, error.message, error.data);
  }
}

/** A handler's answer: a result, or the JSON-RPC error to send instead. */
export type RpcOutcome<T> = { readonly result: T } | { readonly error: JsonRpcErrorObject };

/** True when the outcome is an error. */
export function isRpcError<T>(
  outcome: RpcOutcome<T>,
): outcome is { readonly error: JsonRpcErrorObject } {
  return "error" in outcome;
}

/**
 * Runs `work` and answers with its result, or with what `toError` makes of anything it
 * throws: the one try/catch behind every handler of both eras.
 */
export async function toOutcome<T>(
  work: () => T | Promise<T>,
  toError: (error: unknown) => JsonRpcErrorObject,
): Promise<RpcOutcome<T>> {
  try {
    return { result: await work() };
  } catch (error) {
    return { error: toError(error) };
  }
}

/** Told about failures whose detail clients do not get (an unreachable store, a bug). */
export type FailureReporter = (error: unknown) => void;

/** How one era answers failures; made by {@link failureMapping} from the era's code table. */
export interface FailureMapping {
  /** The era's JSON-RPC code for a core error code. */
  codeOf(code: TaskErrorCode): number;
  /**
   * What a client is answered when serving its request failed: an {@link RpcError} as it
   * is; a core `TaskError` with the era's code (for `-32603` ones, the client's view:
   * `store_unavailable` says "retry" and its detail, which names the database, goes to
   * `report`); anything else a bare `-32603 Internal error`, reported in full, so no stack,
   * SQL or path reaches a client.
   */
  failure(error: unknown, report?: FailureReporter): JsonRpcErrorObject;
  /**
   * What a tool body threw while answering synchronously: our errors as in
   * {@link FailureMapping.failure}, the tool's own JSON-RPC errors (an integer `code`) as
   * they are.
   */
  toolFailure(error: unknown, report?: FailureReporter): JsonRpcErrorObject;
}

/**
 * The one failure-to-wire policy of both era facades, over the era's own table from core's
 * closed {@link TaskErrorCode} vocabulary to JSON-RPC codes (each era keeps its table, the
 * one place where its codes are chosen).
 */
export function failureMapping(codes: Readonly<Record<TaskErrorCode, number>>): FailureMapping {
  const failure = (error: unknown, report?: FailureReporter): JsonRpcErrorObject => {
    if (error instanceof RpcError) return error.toJSON();
    if (isTaskError(error)) {
      const code = codes[error.code];
      if (code !== INTERNAL_ERROR_CODE) return { code, message: error.message };
      if (error.code === "store_unavailable") report?.(error);
      const { message, data } = clientViewOf(error);
      return { code, message, data };
    }
    report?.(error);
    return { code: INTERNAL_ERROR_CODE, message: "Internal error" };
  };
  return {
    codeOf: (code) => codes[code],
    failure,
    toolFailure: (error, report) =>
      error instanceof RpcError || isTaskError(error)
        ? failure(error, report)
        : toJsonRpcError(error),
  };
}
