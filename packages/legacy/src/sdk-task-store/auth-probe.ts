// The SDK hands a TaskStore a session id and never the request's auth info, so a store on an
// unbound transport cannot see whether its sessions are authenticated. This probe finds out
// the only way left without touching the SDK: it watches this process's finished HTTP
// requests (Node's `http.server.response.finish` diagnostics channel, read-only) for one of
// those sessions carrying auth info (`req.auth`, as auth middleware sets it, or an
// `Authorization` header), and tells the store once.

import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { IncomingMessage } from "node:http";

/** Published once a response is finished: the auth middleware has run by then. */
const CHANNEL = "http.server.response.finish";

/** Most sessions watched at once in the process; the oldest make room for new ones. */
const MAX_SESSIONS = 1_000;

// One subscription for the process, however many stores (some servers make one per
// session): each finished request costs one lookup, and a store that is dropped is not kept
// alive by the sessions it watched.
const watched = new Map<string, WeakRef<UnseenAuthProbe>>();

function onFinish(message: unknown): void {
  const request = (message as { request?: IncomingMessage & { auth?: unknown } }).request;
  const sessionId = request?.headers["mcp-session-id"];
  if (typeof sessionId !== "string") return;
  const probe = watched.get(sessionId);
  if (probe === undefined) return;
  if (request?.auth === undefined && request?.headers.authorization === undefined) return;
  forget(sessionId);
  probe.deref()?.found();
}

function forget(sessionId: string): void {
  if (watched.delete(sessionId) && watched.size === 0) unsubscribe(CHANNEL, onFinish);
}

/** Watches sessions served by an unbound transport for requests carrying auth info. */
export class UnseenAuthProbe {
  readonly #onFound: () => void;
  #done = false;

  /** `onFound` is called at most once, for the first watched session seen with auth info. */
  constructor(onFound: () => void) {
    this.#onFound = onFound;
  }

  /** Watches `sessionId`'s requests from now on. */
  watch(sessionId: string): void {
    if (this.#done || watched.get(sessionId)?.deref() === this) return;
    const oldest = watched.size >= MAX_SESSIONS ? watched.keys().next().value : undefined;
    if (oldest !== undefined) forget(oldest);
    const wasEmpty = watched.size === 0;
    watched.set(sessionId, new WeakRef(this));
    if (wasEmpty) subscribe(CHANNEL, onFinish);
  }

  /** Stops watching (after finding, or when the store closes). */
  stop(): void {
    this.#done = true;
    for (const [sessionId, probe] of watched) {
      if (probe.deref() === this) forget(sessionId);
    }
  }

  /** @internal A watched session's request carried auth info. */
  found(): void {
    if (this.#done) return;
    this.stop();
    this.#onFound();
  }
}
