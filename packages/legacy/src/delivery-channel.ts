import type { SideRequestMethod } from "./wire.js";

/** A server-to-client request as a channel sends it. */
export interface SideRequest {
  readonly method: SideRequestMethod;
  readonly params: Record<string, unknown>;
}

/**
 * One way to reach a client: the SSE stream of an in-flight `tasks/result`, or the
 * session's standalone (GET) stream. `send` resolves with the client's result, rejects
 * with a {@link RpcError} when the client answered with a JSON-RPC error, and with
 * anything else when the request could not be delivered or answered (stream gone, timeout).
 */
export interface DeliveryChannel {
  readonly kind: "tasks/result" | "session";
  /** Client capabilities declared in `initialize`, gating which side requests are used. */
  readonly clientCapabilities: Readonly<Record<string, unknown>> | undefined;
  /** Aborted when the channel goes away; in-flight requests are then released. */
  readonly signal: AbortSignal;
  send(request: SideRequest, signal: AbortSignal): Promise<Record<string, unknown>>;
}
