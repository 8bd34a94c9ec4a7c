import { RpcError } from "@mcp-tasks/core";
import { ProtocolError } from "@modelcontextprotocol/server";
import type { DeliveryChannel, SideRequest } from "../delivery-channel.js";

/** How a channel sends one side request over the SDK. */
export type SendOverSdk = (
  request: SideRequest,
  options: { signal: AbortSignal; timeout: number },
) => Promise<unknown>;

/**
 * A {@link DeliveryChannel} over an SDK send function: the request stream of an in-flight
 * request, or the session's standalone stream. A client's JSON-RPC error answer becomes
 * an {@link RpcError} (the client did answer); anything else passes as a delivery failure.
 */
export function sdkChannel(
  kind: DeliveryChannel["kind"],
  signal: AbortSignal,
  clientCapabilities: Readonly<Record<string, unknown>> | undefined,
  timeout: number,
  send: SendOverSdk,
): DeliveryChannel {
  return {
    kind,
    clientCapabilities,
    signal,
    send: async (request, sendSignal) => {
      try {
        return (await send(request, { signal: sendSignal, timeout })) as Record<string, unknown>;
      } catch (error) {
        if (error instanceof ProtocolError) {
          const { code, message, data } = error as ProtocolError & { data?: unknown };
          throw new RpcError(code, message, data);
        }
        throw error;
      }
    },
  };
}

/** `AbortSignal.any`, tolerating absent signals. */
export function anySignal(...signals: (AbortSignal | undefined)[]): AbortSignal {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  return present.length === 1 ? (present[0] as AbortSignal) : AbortSignal.any(present);
}
