import {
  type Clock,
  type Owner,
  sameOwner,
  systemClock,
  type TaskRunner,
  type TaskService,
  type ToolDefinition,
} from "@mcp-tasks/core";
import type { TasksServerFactory } from "@mcp-tasks/mcp-server";
import { type AuthInfo, isInitializeRequest } from "@modelcontextprotocol/server";
import { LegacyTaskHandlers } from "../handlers.js";
import {
  type HeaderReader,
  matchDirectTaskGet,
  matchDirectToolCall,
  sseAnswerHeaders,
  sseMessage,
} from "./direct.js";
import { LegacySession } from "./session.js";
import { SessionTable } from "./session-table.js";
import { watchBody } from "./sse-body.js";

/** Settings of {@link createLegacyHandler}. */
export interface LegacyHandlerOptions {
  readonly service: TaskService;
  readonly runner: TaskRunner;
  readonly tools: readonly ToolDefinition[];
  /**
   * Who is calling, resolved for every HTTP request. The owner of the `initialize`
   * request is bound to the session; later requests of that session from another owner
   * are answered `404 Session not found`, exactly like an unknown session.
   */
  readonly ownerOf: (request: Request) => Owner | Promise<Owner>;
  readonly serverInfo: { readonly name: string; readonly version: string; readonly title?: string };
  readonly instructions?: string;
  /** How long a side request (elicitation, sampling) may wait for its answer; default 10 min. */
  readonly inputRequestTimeoutMs?: number;
  /** Most sessions held at once; `initialize` beyond it gets `503`. Default 10 000. */
  readonly maxSessions?: number;
  /**
   * Closes a session that has seen no request for this long and has no open stream
   * (a client that never sends DELETE would otherwise hold its slot forever). Default
   * 30 min; 0 keeps sessions until DELETE or {@link LegacyHandler.close}.
   */
  readonly sessionIdleTimeoutMs?: number;
  /** Time source for idle sessions; default the system clock. */
  readonly clock?: Clock;
  /** Told about errors no client can receive; default `console.error`. */
  readonly onError?: (error: unknown) => void;
  /**
   * Told when a session ends, however it ends (`DELETE`, its transport closing, the idle
   * sweep, {@link LegacyHandler.close}): e.g. to give back a per-owner session slot.
   */
  readonly onSessionClosed?: (sessionId: string) => void;
  /**
   * Your own server, built per session (called with `{ era: "legacy" }` at `initialize`):
   * the task methods are attached to it, so an `McpServer` keeps its tools, prompts and
   * resources next to the task tools. Without it each session is served by a bare server
   * with the task tools only.
   */
  readonly server?: TasksServerFactory;
}

/** Extra per-request input, as `toNodeHandler` passes it. */
export interface LegacyFetchExtra {
  readonly authInfo?: AuthInfo;
  readonly parsedBody?: unknown;
}

/** A POST whose body the host already read and parsed, for {@link LegacyHandler.answerDirect}. */
export interface LegacyDirectRequest {
  /** The request headers (a `Headers`, or a view of `node:http` headers). */
  readonly headers: HeaderReader;
  /** The caller, as the host resolved it for this request (what `ownerOf` would answer). */
  readonly owner: Owner;
  readonly parsedBody: unknown;
}

/** A complete response, to write in one go. */
export interface LegacyDirectAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** A web-standard, sessionful 2025-11-25 endpoint. */
export interface LegacyHandler {
  fetch(request: Request, extra?: LegacyFetchExtra): Promise<Response>;
  /**
   * The lean path for polls and creation: a `tasks/get`, or a `tools/call` with `params.task`
   * that becomes a task (a tool that allows tasks, without a preflight, on a session without
   * a user's `server`), of an open session, answered without a web `Request`, the session
   * transport or a response stream, byte for byte as {@link fetch} answers it. Resolves
   * `undefined` for anything else (another method, an unknown or foreign session, unusual
   * headers or body): serve that request with {@link fetch}.
   */
  answerDirect(request: LegacyDirectRequest): Promise<LegacyDirectAnswer | undefined>;
  /** Closes every session and stops watching tasks; running tasks keep running. */
  close(): Promise<void>;
  /** The transport-agnostic handlers underneath. */
  readonly handlers: LegacyTaskHandlers;
  /** Sessions currently open. */
  readonly sessionCount: number;
  /** Closes the sessions idle past `sessionIdleTimeoutMs` now; resolves with how many. */
  closeIdleSessions(): Promise<number>;
}

function jsonRpcErrorResponse(status: number, code: number, message: string): Response {
  return Response.json(
    { jsonrpc: "2.0", error: { code, message }, id: null },
    { status, headers: { "Content-Type": "application/json" } },
  );
}

const sessionRequired = () =>
  jsonRpcErrorResponse(400, -32000, "Bad Request: Mcp-Session-Id header is required");

/**
 * A web-standard, sessionful 2025-11-25 tasks endpoint on `@modelcontextprotocol/server`
 * 2.4: one `WebStandardStreamableHTTPServerTransport` and one low-level `Server` per
 * session. Route legacy traffic to `fetch` (e.g. with `isLegacyRequest`), or mount it with
 * `toNodeHandler` from `@modelcontextprotocol/node`.
 */
export function createLegacyHandler(options: LegacyHandlerOptions): LegacyHandler {
  const onError = options.onError ?? ((e: unknown) => console.error("legacy session:", e));
  const handlers = new LegacyTaskHandlers({ ...options, onError });
  const clock = options.clock ?? systemClock;
  const sessions = new SessionTable<LegacySession>({
    maxSessions: options.maxSessions ?? 10_000,
    idleMs: options.sessionIdleTimeoutMs ?? 30 * 60_000,
    clock,
    onRemoved: (id) => {
      try {
        options.onSessionClosed?.(id);
      } catch (error) {
        onError(error);
      }
    },
  });
  let closed = false;

  async function initialize(request: Request, owner: Owner, extra: LegacyFetchExtra) {
    if (request.method !== "POST") return sessionRequired();
    let body = extra.parsedBody;
    if (body === undefined) {
      try {
        body = await request.json();
      } catch {
        return jsonRpcErrorResponse(400, -32700, "Parse error: Invalid JSON");
      }
    }
    const messages = Array.isArray(body) ? body : [body];
    if (!messages.some((m) => isInitializeRequest(m))) return sessionRequired();
    if (sessions.full)
      return jsonRpcErrorResponse(503, -32000, "Too many sessions; try again later");
    const server =
      options.server === undefined ? undefined : await options.server({ era: "legacy" });
    const session = new LegacySession(owner, {
      ...(server !== undefined && { server }),
      handlers,
      serverInfo: options.serverInfo,
      ...(options.instructions !== undefined && { instructions: options.instructions }),
      inputRequestTimeoutMs: options.inputRequestTimeoutMs ?? 600_000,
      onSessionInitialized: (id, s) => sessions.add(id, s),
      onSessionClosed: (id, s) => {
        if (id !== undefined) sessions.remove(id, s);
      },
      onError,
    });
    await session.connect();
    session.lastSeen = clock.now();
    const response = await session.transport.handleRequest(request, {
      ...(extra.authInfo !== undefined && { authInfo: extra.authInfo }),
      parsedBody: body,
    });
    if (session.transport.sessionId === undefined) await session.close();
    return response;
  }

  async function fetch(request: Request, extra: LegacyFetchExtra = {}): Promise<Response> {
    if (closed) return jsonRpcErrorResponse(503, -32000, "Server is shutting down");
    let owner: Owner;
    try {
      owner = await options.ownerOf(request);
    } catch {
      return jsonRpcErrorResponse(401, -32001, "Unauthorized");
    }
    const sessionId = request.headers.get("mcp-session-id");
    if (sessionId === null) return initialize(request, owner, extra);
    const session = sessions.get(sessionId);
    // A foreign owner gets the same answer as an unknown session.
    if (session === undefined || !sameOwner(session.owner, owner)) {
      return jsonRpcErrorResponse(404, -32001, "Session not found");
    }
    session.lastSeen = clock.now();
    const opening = request.method === "GET" ? session.standaloneOpening() : undefined;
    let response: Response;
    try {
      response = await session.transport.handleRequest(request, {
        ...(extra.authInfo !== undefined && { authInfo: extra.authInfo }),
        ...(extra.parsedBody !== undefined && { parsedBody: extra.parsedBody }),
      });
      if (request.method === "GET" && response.status === 200 && response.body !== null) {
        const close = session.openStandalone();
        request.signal.addEventListener("abort", close, { once: true });
        return watchBody(response, close, ": stream open\n\n");
      }
    } finally {
      opening?.();
    }
    if (response.body === null) return response;
    session.openResponses += 1;
    let done = false;
    const finished = () => {
      if (done) return;
      done = true;
      session.openResponses -= 1;
      session.lastSeen = clock.now();
    };
    request.signal.addEventListener("abort", finished, { once: true });
    return watchBody(response, finished);
  }

  async function answerDirect(
    request: LegacyDirectRequest,
  ): Promise<LegacyDirectAnswer | undefined> {
    if (closed) return undefined;
    const sessionId = request.headers.get("mcp-session-id");
    if (sessionId === null) return undefined;
    const get = matchDirectTaskGet(request.headers, request.parsedBody);
    const call =
      get === undefined ? matchDirectToolCall(request.headers, request.parsedBody) : undefined;
    if (get === undefined && call === undefined) return undefined;
    const session = sessions.get(sessionId);
    if (session === undefined || !session.open || !sameOwner(session.owner, request.owner)) {
      return undefined;
    }
    session.lastSeen = clock.now();
    let response: Record<string, unknown> | undefined;
    if (get !== undefined) {
      response = await session.answerTaskGet(get.id, get.params, get.traceContext);
    } else if (call !== undefined) {
      response = await session.answerToolCall(call);
      if (response === undefined) return undefined;
    }
    return { status: 200, headers: sseAnswerHeaders(sessionId), body: sseMessage(response) };
  }

  return {
    fetch,
    answerDirect,
    handlers,
    get sessionCount() {
      return sessions.size;
    },
    closeIdleSessions: () => sessions.closeIdle(),
    async close() {
      closed = true;
      await sessions.closeAll();
    },
  };
}
