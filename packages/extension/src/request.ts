import type { Owner, TraceContext } from "@mcp-tasks/core";

/**
 * What a handler knows about the request it answers, independent of any transport: who
 * asks, what they declared on this request, and the routing header when there is one.
 */
export interface TasksRequestContext {
  /** The caller; every store call is made as this owner. */
  readonly owner: Owner;
  /** `_meta["io.modelcontextprotocol/clientCapabilities"]` of this request. */
  readonly clientCapabilities: unknown;
  /** The decoded `Mcp-Name` header, when the transport has one. */
  readonly routingName?: string;
  /** Multi-round-trip input responses carried by this request (already lifted off params). */
  readonly inputResponses?: Readonly<Record<string, unknown>>;
  /** Opaque multi-round-trip state echoed back by the client, when any. */
  readonly requestState?: string;
  /** Aborted when the client goes away; used for synchronous tool runs. */
  readonly signal?: AbortSignal;
  /**
   * The trace context the transport found (e.g. the HTTP `traceparent` header, or `_meta`
   * the SDK lifted off the params). A `traceparent` in the params' own `_meta` wins.
   */
  readonly traceContext?: TraceContext;
}
