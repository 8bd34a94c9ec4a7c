// The SDK hands a TaskStore a session id and never the request's auth info, so a store on an
// unbound transport cannot see whether its sessions are authenticated. This probe finds out
// the only way left without touching the SDK: it watches this process's finished HTTP
// requests (Node's `http.server.response.finish` diagnostics channel, read-only) for one of
// those sessions carrying auth info (`req.auth`, as auth middleware sets it, or an
// `Authorization` header), and says so once.

import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { IncomingMessage } from "node:http";

/** Published once a response is finished: the auth middleware has run by then. */
const CHANNEL = "http.server.response.finish";

/** Most sessions watched at once; beyond it, the ones already watched tell. */
const MAX_SESSIONS = 1_000;

/** Watches sessions served by an unbound transport for requests carrying auth info. */
export class UnseenAuthProbe {
  readonly #sessions = new Set<string>();
  readonly #found: () => void;
  #listening = false;
  #done = false;

  /** `found` is called at most once, for the first watched session seen with auth info. */
  constructor(found: () => void) {
    this.#found = found;
  }

  /** Watches `sessionId`'s requests from now on. */
  watch(sessionId: string): void {
    if (this.#done || this.#sessions.size >= MAX_SESSIONS) return;
    this.#sessions.add(sessionId);
    if (!this.#listening) {
      this.#listening = true;
      subscribe(CHANNEL, this.#onFinish);
    }
  }

  /** Stops watching (after finding, or when the store closes). */
  stop(): void {
    this.#done = true;
    this.#sessions.clear();
    if (this.#listening) {
      this.#listening = false;
      unsubscribe(CHANNEL, this.#onFinish);
    }
  }

  readonly #onFinish = (message: unknown): void => {
    const request = (message as { request?: IncomingMessage & { auth?: unknown } }).request;
    const sessionId = request?.headers["mcp-session-id"];
    if (typeof sessionId !== "string" || !this.#sessions.has(sessionId)) return;
    if (request?.auth === undefined && request?.headers.authorization === undefined) return;
    this.stop();
    this.#found();
  };
}
