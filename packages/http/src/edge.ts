import type { Owner } from "@mcp-tasks/core";
import {
  bindTasksExtension,
  createNodeTasksHandler,
  createTasksServer,
  type NodeTasksHandler,
  TasksExtension,
} from "@mcp-tasks/extension";
import { createLegacyHandler, type LegacyHandler } from "@mcp-tasks/legacy";
import { type AuthInfo, createMcpHandler, type McpHttpHandler } from "@modelcontextprotocol/server";
import { HeadGuards } from "./guards.js";
import { isLimitRefusal, NO_HOLD, OwnerLimits, type Release } from "./limits.js";
import { countMethod, listenTaskCount, requestIdOf } from "./messages.js";
import type { LegacyEraOptions, RoutedRequest, TasksEndpointOptions } from "./options.js";
import { type CallerOptions, resolveOwnerFromAuthInfo } from "./owner.js";
import { inBand, type Refusal, refusal } from "./refusals.js";

const DEFAULT_SERVER_INFO = { name: "mcp-tasks", version: "0.1.0" };
/** Where the resolved owner travels to the SDK-served 2026-07-28 handlers. */
const OWNER_KEY = "io.github.mcp-tasks/owner";

/**
 * Everything both fronts (`node:http` and `fetch`) share: the settings, the head checks, the
 * two era legs built from one service, runner and tool list.
 */
export class Edge {
  readonly extension: TasksExtension;
  /** The 2026-07-28 leg for `node:http` (the polling fast paths). */
  readonly modern: NodeTasksHandler;
  /** The 2026-07-28 leg for web `Request`s (SDK-served, plus task listen streams). */
  readonly modernFetch: McpHttpHandler;
  /** The 2025-11-25 leg; `undefined` when that era is off. */
  readonly legacy: LegacyHandler | undefined;
  readonly legacyOffReason: string | undefined;
  readonly guards: HeadGuards;
  readonly caller: CallerOptions;
  readonly maxBodyBytes: number;
  readonly bodyTimeoutMs: number;
  readonly keepAliveMs: number;
  readonly onError: (error: unknown) => void;
  readonly options: TasksEndpointOptions;
  /** The owner of each web `Request` handed to the legacy leg (its `ownerOf` reads it). */
  readonly owners = new WeakMap<Request, Owner>();
  /** The per-owner limits (sessions, listen streams, waits, request rate). */
  readonly limits: OwnerLimits;
  /** The session slot each open 2025-11-25 session holds, given back when it closes. */
  readonly #sessionSlots = new Map<string, Release>();
  closed = false;

  constructor(options: TasksEndpointOptions) {
    this.options = options;
    this.onError = options.onError ?? (() => {});
    this.maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
    this.bodyTimeoutMs = options.bodyTimeoutMs ?? 30_000;
    this.keepAliveMs = options.keepAliveMs ?? 15_000;
    const hosts = options.allowedHosts ?? "loopback";
    this.guards = new HeadGuards(
      hosts,
      options.allowedOrigins ?? (hosts === "loopback" ? "loopback" : "any"),
    );
    // With an owner hook configured, anonymous callers are refused unless asked otherwise.
    const requireOwner = options.requireOwner ?? options.owner !== undefined;
    this.caller = {
      resolve: options.owner ?? resolveOwnerFromAuthInfo,
      requireOwner,
      challenge: options.authChallenge ?? "Bearer",
    };
    if (requireOwner && !options.service.requireOwner) {
      this.onError(
        new Error(
          "anonymous callers are refused, but the TaskService shows unowned tasks to every " +
            "caller: construct it with requireOwner: true to refuse unowned tasks too",
        ),
      );
    }
    this.limits = new OwnerLimits(options.limits);
    const serverInfo = options.serverInfo ?? DEFAULT_SERVER_INFO;
    const instructions = options.instructions;
    const { service, runner, tools } = options;
    this.extension = new TasksExtension({ service, runner, tools, onError: this.onError });
    const userServer = options.server;
    this.modern = createNodeTasksHandler(this.extension, {
      serverInfo,
      ...(userServer !== undefined && { server: userServer }),
      maxBodyBytes: this.maxBodyBytes,
      keepAliveMs: this.keepAliveMs,
      onError: this.onError,
      ...(instructions !== undefined && { instructions }),
    });
    const extension = this.extension;
    // The 2026-07-28 leg for web requests: as `createNodeTasksHandler` builds its SDK leg.
    this.modernFetch = createMcpHandler(
      async (ctx) => {
        const owner = ownerOfAuthInfo(ctx.authInfo);
        if (userServer === undefined) {
          return createTasksServer(extension, {
            owner,
            serverInfo,
            ...(instructions !== undefined && { instructions }),
          });
        }
        const server = await userServer({ era: "modern" });
        bindTasksExtension(server, extension, owner);
        return server;
      },
      { legacy: "reject", maxRequestBodySize: this.maxBodyBytes, onerror: () => {} },
    );
    const legacy: LegacyEraOptions =
      typeof options.legacy === "object" ? options.legacy : { enabled: options.legacy ?? true };
    this.legacyOffReason = legacy.offReason;
    this.legacy =
      legacy.enabled === false
        ? undefined
        : createLegacyHandler({
            service,
            runner,
            tools,
            serverInfo,
            ownerOf: (request) => this.owners.get(request) ?? ownerOfAuthInfo(undefined),
            onError: this.onError,
            onSessionClosed: (sessionId) => this.#sessionClosed(sessionId),
            ...(userServer !== undefined && { server: userServer }),
            ...(instructions !== undefined && { instructions }),
            ...(legacy.maxSessions !== undefined && { maxSessions: legacy.maxSessions }),
            ...(legacy.sessionIdleTimeoutMs !== undefined && {
              sessionIdleTimeoutMs: legacy.sessionIdleTimeoutMs,
            }),
            ...(legacy.inputRequestTimeoutMs !== undefined && {
              inputRequestTimeoutMs: legacy.inputRequestTimeoutMs,
            }),
          });
  }

  /**
   * The request-rate limit, once the body is read: the refusal to answer (in band when the
   * body is one request with an id), or `undefined`.
   */
  rateRefusal(caller: Owner, body: unknown): Refusal | undefined {
    const refused = this.limits.takeRequest(caller);
    return refused === undefined ? undefined : inBand(refused, requestIdOf(body));
  }

  /**
   * What a 2026-07-28 request holds while its response is open: a `subscriptions/listen`
   * for task ids holds a stream and its ids. The refusal (in band) when over a limit.
   */
  holdModern(caller: Owner, body: unknown): Release | Refusal {
    const tasks = listenTaskCount(body);
    if (tasks === undefined) return NO_HOLD;
    const held = this.limits.openListen(caller, tasks);
    return isLimitRefusal(held) ? inBand(held, requestIdOf(body)) : held;
  }

  /**
   * What a 2025-11-25 request holds: an `initialize` (no session yet) a session slot, kept
   * while the session lives ({@link sessionAnswered}); `tasks/result` calls a wait each,
   * until the response ends. The refusal (in band) when over a limit.
   */
  holdLegacy(
    caller: Owner,
    httpMethod: string,
    body: unknown,
    sessionId: string | undefined,
  ): LegacyHold | Refusal {
    if (httpMethod !== "POST") return { session: undefined, waits: NO_HOLD };
    const id = requestIdOf(body);
    let session: Release | undefined;
    if (sessionId === undefined && countMethod(body, "initialize") > 0) {
      const held = this.limits.openSession(caller);
      if (isLimitRefusal(held)) return inBand(held, id);
      session = held;
    }
    const waits = this.limits.openWaits(caller, countMethod(body, "tasks/result"));
    if (isLimitRefusal(waits)) {
      session?.();
      return inBand(waits, id);
    }
    return { session, waits };
  }

  /** Keeps the session slot of an `initialize` that opened a session; else gives it back. */
  sessionAnswered(hold: LegacyHold, response: Response | undefined): void {
    if (hold.session === undefined) return;
    const created = response?.ok ? response.headers.get("mcp-session-id") : null;
    if (created === null || created === undefined) hold.session();
    else this.#sessionSlots.set(created, hold.session);
  }

  #sessionClosed(sessionId: string): void {
    const slot = this.#sessionSlots.get(sessionId);
    if (slot === undefined) return;
    this.#sessionSlots.delete(sessionId);
    slot();
    this.options.onLegacySession?.({ kind: "closed", sessionId });
  }

  /** Reports a refusal answered at the edge; a refused Host is also logged (`onError`). */
  /** Tells `onRouted` that a request passed every edge check and goes to its era. */
  routed(routed: RoutedRequest): void {
    this.options.onRouted?.(routed);
  }

  refused(refused: Refusal, method: string): void {
    if (refused.kind === "invalid-host-header" || refused.kind === "host-not-allowed") {
      this.onError(new Error(`rejected ${method}: ${refused.message} (HTTP ${refused.status})`));
    }
    this.options.onRefused?.(refused);
  }

  /**
   * The answer to a request of the 2025-11-25 era (or one that is not JSON) when that era is
   * off: `-32700` for a body that is not JSON, `405` for GET and DELETE (no sessions), else
   * `era-not-served`.
   */
  eraNotServed(method: string, invalidJson: boolean): Refusal {
    if (invalidJson) return refusal("parse-error");
    if (method !== "POST") return refusal("method-not-allowed", { allow: "POST" });
    return refusal("era-not-served", {
      ...(this.legacyOffReason !== undefined && { reason: this.legacyOffReason }),
    });
  }

  /** `AuthInfo` for the SDK-served handlers, carrying the resolved owner. */
  authInfoFor(owner: Owner, authInfo: AuthInfo | undefined): AuthInfo {
    return {
      token: authInfo?.token ?? "",
      clientId: authInfo?.clientId ?? owner.principalId ?? "anonymous",
      scopes: authInfo?.scopes ?? [],
      ...authInfo,
      extra: { ...authInfo?.extra, [OWNER_KEY]: owner },
    };
  }
}

/** What a 2025-11-25 request holds while it is served (see {@link Edge.holdLegacy}). */
export interface LegacyHold {
  /** The session slot of an `initialize`. */
  readonly session: Release | undefined;
  /** The `tasks/result` waits, given back when the response ends. */
  readonly waits: Release;
}

/** The owner {@link Edge.authInfoFor} put in `AuthInfo`, or anonymous. */
function ownerOfAuthInfo(authInfo: AuthInfo | undefined): Owner {
  const value = authInfo?.extra?.[OWNER_KEY];
  return value && typeof value === "object"
    ? (value as Owner)
    : { principalId: null, tenantId: null, audience: null };
}
