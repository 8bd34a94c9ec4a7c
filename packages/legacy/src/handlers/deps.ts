import type { FacadeDeps, Owner, TraceContext } from "@mcp-tasks/core";
import type { z } from "zod";
import type { DeliveryChannel } from "../delivery-channel.js";
import { invalidParams } from "../errors.js";
import type { InputRegistry } from "../input-registry.js";

/** What every 2025-11-25 handler works on: core's facade dependencies, and the registry. */
export interface LegacyDeps extends FacadeDeps {
  /** Who serves which task's input on this node. */
  readonly registry: InputRegistry;
}

/** What a handler knows about the request it answers, independent of any transport. */
export interface LegacyRequestContext {
  /** The caller (the session's owner); every store call is made as this owner. */
  readonly owner: Owner;
  /** Aborted when the request is cancelled or its client goes away. */
  readonly signal?: AbortSignal;
  /** The request's own stream, for side requests (`tasks/result`, synchronous `tools/call`). */
  readonly channel?: DeliveryChannel;
  /**
   * The trace context the transport found (e.g. the HTTP `traceparent` header). A
   * `traceparent` in the params' own `_meta` wins.
   */
  readonly traceContext?: TraceContext;
}

/** Parses `params` with `schema`, or throws `-32602` naming every problem. */
export function parseParams<S extends z.ZodType>(
  schema: S,
  params: unknown,
  method: string,
): z.infer<S> {
  const parsed = schema.safeParse(params);
  if (!parsed.success) throw invalidParams(method, parsed.error);
  return parsed.data;
}
