import type { JsonRpcErrorObject } from "./task.js";

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
