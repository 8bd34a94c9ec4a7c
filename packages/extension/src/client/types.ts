// The shapes `@modelcontextprotocol/ext-tasks` passes to and expects from a host's
// `rawDispatch`, declared here structurally so this entry needs no dependency on it.

/** A JSON value (ext-tasks' `JsonValue`). */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };

/** A JSON-RPC error object. */
export interface JsonRpcErrorObject {
  readonly code: number;
  readonly message: string;
  readonly data?: JsonValue;
}

/** What a dispatch resolves with (ext-tasks' `JsonRpcResponse`). */
export type RawDispatchResponse =
  | { readonly kind: "result"; readonly result: JsonValue }
  | { readonly kind: "error"; readonly error: JsonRpcErrorObject };

/** Per-request options ext-tasks hands the dispatch (its `DispatchOptions`). */
export interface RawDispatchRequestOptions {
  /** Aborts the HTTP request. */
  readonly signal?: AbortSignal;
  /** What the caller attached to this call (`callTool(…, { headers, requestTimeoutMs })`). */
  readonly context?: {
    readonly headers?: Readonly<Record<string, string>>;
    readonly requestTimeoutMs?: number;
    readonly resetTimeoutOnProgress?: boolean;
  };
}

/**
 * A host dispatch for ext-tasks' 2026-07-28 path, assignable to its `RawClientDispatch`:
 * sends one JSON-RPC request (already framed with the `_meta` envelope) and resolves with
 * its result or JSON-RPC error.
 */
export type RawDispatch = (
  request: JsonValue,
  options?: RawDispatchRequestOptions,
) => Promise<RawDispatchResponse>;
