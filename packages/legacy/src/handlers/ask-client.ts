import type { InputRequest } from "@mcp-tasks/core";
import { internalError } from "../errors.js";
import { isSideRequestMethod, SIDE_REQUEST_CAPABILITY } from "../wire.js";
import type { LegacyRequestContext } from "./deps.js";

/**
 * One side request (elicitation, sampling, roots) on the request's own stream, for input
 * gathered before or without a task; gated on the capabilities the client declared.
 */
export function askClient(
  request: InputRequest,
  ctx: LegacyRequestContext,
): Promise<Record<string, unknown>> {
  const channel = ctx.channel;
  if (
    channel === undefined ||
    !isSideRequestMethod(request.method) ||
    channel.clientCapabilities?.[SIDE_REQUEST_CAPABILITY[request.method]] === undefined
  ) {
    throw internalError(`Input request ${request.method} cannot be sent to this client`);
  }
  return channel.send(
    { method: request.method, params: { ...request.params } },
    ctx.signal ?? channel.signal,
  );
}
