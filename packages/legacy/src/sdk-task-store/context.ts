import { AsyncLocalStorage } from "node:async_hooks";
import { type Owner, owner } from "@mcp-tasks/core";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { SdkTaskStoreOptions } from "./options.js";
import type { SdkTaskStore } from "./store.js";

/** What the store knows of the request being served. */
interface ServingContext {
  readonly authInfo: AuthInfo | undefined;
  readonly sessionId: string | undefined;
}

// The SDK's TaskStore methods receive a session id at most; the rest of the request travels
// here, alongside the handler (and the work it starts) in the same async context.
const servingContext = new AsyncLocalStorage<ServingContext>();

/**
 * Runs `fn` with `authInfo` as the auth info of the request being served, so the store can
 * take the owner from it. Wrap the transport call, e.g.
 * `withTaskAuth(req.auth, () => transport.handleRequest(req, res, req.body))`; everything
 * the SDK does for that request (and the work it starts) sees it. Not needed when the
 * transport is bound with {@link SdkTaskStore.bindTransport} and the auth info is on
 * `req.auth`, which the SDK's transport hands on with each message.
 */
export function withTaskAuth<T>(authInfo: AuthInfo | undefined, fn: () => T): T {
  return servingContext.run({ authInfo, sessionId: servingContext.getStore()?.sessionId }, fn);
}

/**
 * The implementation of {@link SdkTaskStore.bindTransport}: wraps `transport`'s message
 * handler so each message is served in its session and auth info.
 */
export function bindServingContext<T extends Pick<Transport, "onmessage" | "sessionId">>(
  transport: T,
): T {
  const dispatch = transport.onmessage;
  if (dispatch === undefined) {
    throw new Error("SdkTaskStore.bindTransport: call it after server.connect(transport)");
  }
  transport.onmessage = (message, extra) => {
    const outer = servingContext.getStore();
    servingContext.run(
      // The session is the transport's own (validated), not anything the client claims.
      { sessionId: transport.sessionId, authInfo: extra?.authInfo ?? outer?.authInfo },
      () => dispatch.call(transport, message, extra),
    );
  };
  return transport;
}

/** The session a call belongs to: the one passed, else the one of the request being served. */
export function sessionOf(sessionId: string | undefined): string | undefined {
  return sessionId ?? servingContext.getStore()?.sessionId;
}

/**
 * True when the request being served is visible to the store: the call is made while a
 * bound transport delivers a message, or inside {@link withTaskAuth}.
 */
export function servingContextKnown(): boolean {
  return servingContext.getStore() !== undefined;
}

/** What the owner of a call passing `sessionId` is decided from. */
export function ownerContextOf(sessionId: string | undefined): SdkOwnerContext {
  return { authInfo: servingContext.getStore()?.authInfo, sessionId: sessionOf(sessionId) };
}

/** What {@link SdkTaskStoreOptions.ownerOf} decides from. */
export interface SdkOwnerContext {
  /** The auth info of the request being served (see {@link withTaskAuth}). */
  readonly authInfo: AuthInfo | undefined;
  /**
   * The SDK session the call belongs to: the one the caller passed, else (for a call made
   * without one) the session of the request being served on a transport bound with
   * {@link SdkTaskStore.bindTransport}.
   */
  readonly sessionId: string | undefined;
}

/** The default owner: the authenticated client, or else the session. */
export function defaultSdkOwner({ authInfo, sessionId }: SdkOwnerContext): Owner {
  if (authInfo !== undefined) {
    const tenant = authInfo.extra?.tenantId;
    return owner({
      principalId: authInfo.clientId,
      tenantId: typeof tenant === "string" ? tenant : null,
    });
  }
  return owner({ audience: sessionId === undefined ? null : `mcp-session:${sessionId}` });
}
