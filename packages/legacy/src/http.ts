import { randomUUID } from "node:crypto";
import {
  type Clock,
  isTerminal,
  type Owner,
  sameOwner,
  systemClock,
  type TaskProgress,
  type TaskRecord,
  type TaskRunner,
  type TaskService,
  type ToolDefinition,
} from "@mcp-tasks/core";
import {
  type AuthInfo,
  isInitializeRequest,
  ProtocolError,
  Server,
  type ServerContext,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { LegacyRpcError } from "./errors.js";
import { LegacyTaskHandlers } from "./handlers.js";
import type { SideRequest } from "./input-bridge.js";
import { type DeliveryChannel, followTask, InputPump, InputRegistry } from "./input-bridge.js";
import { legacyStatusOf, toLegacyTask } from "./projection.js";
import { CreateTaskResultSchema } from "./wire.js";

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
}

/** Extra per-request input, as `toNodeHandler` passes it. */
export interface LegacyFetchExtra {
  readonly authInfo?: AuthInfo;
  readonly parsedBody?: unknown;
}

/** A web-standard, sessionful 2025-11-25 endpoint. */
export interface LegacyHandler {
  fetch(request: Request, extra?: LegacyFetchExtra): Promise<Response>;
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

/** `AbortSignal.any`, tolerating absent signals. */
function anySignal(...signals: (AbortSignal | undefined)[]): AbortSignal {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  return present.length === 1 ? (present[0] as AbortSignal) : AbortSignal.any(present);
}

/** Maps a client's JSON-RPC error answer to {@link LegacyRpcError}; anything else passes. */
function clientError(error: unknown): unknown {
  if (error instanceof ProtocolError) {
    const { code, message, data } = error as ProtocolError & { data?: unknown };
    return new LegacyRpcError(code, message, data);
  }
  return error;
}

interface Tracked {
  readonly follower: { refresh(): void; stop(): void };
  /** Stops forwarding the handler's own progress reports. */
  readonly stopProgress: () => void;
  /** The handler reported progress itself, so none is derived from status changes. */
  explicitProgress: boolean;
  lastStatus: string;
  lastMessage: string | undefined;
  readonly progressToken: string | number | undefined;
  progress: number;
  /** The client has asked about the task, so it can correlate side requests to it. */
  acknowledged: boolean;
  pump: InputPump | undefined;
  pumpChannel: DeliveryChannel | undefined;
}

/** One initialized 2025-11-25 session: its server, transport, owner and task watchers. */
class LegacySession {
  readonly owner: Owner;
  readonly server: Server;
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly #handlers: LegacyTaskHandlers;
  readonly #options: LegacyHandlerOptions;
  readonly #tracked = new Map<string, Tracked>();
  readonly #unlisten: () => void;
  #standalone: { channel: DeliveryChannel; close: () => void } | undefined;
  #closed = false;
  /** When the session last saw a request, and how many of its responses are still open. */
  lastSeen = 0;
  openResponses = 0;

  /** True while a stream is open, so the session is in use whatever its last request. */
  get busy(): boolean {
    return this.openResponses > 0 || this.#standalone !== undefined;
  }

  constructor(
    owner: Owner,
    handlers: LegacyTaskHandlers,
    options: LegacyHandlerOptions,
    onSession: (id: string, session: LegacySession) => void,
    onClosed: (id: string | undefined) => void,
  ) {
    this.owner = owner;
    this.#handlers = handlers;
    this.#options = options;
    this.server = new Server(options.serverInfo, {
      capabilities: handlers.capabilities,
      ...(options.instructions !== undefined && { instructions: options.instructions }),
    });
    this.transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => onSession(id, this),
      onsessionclosed: (id) => onClosed(id),
    });
    this.transport.onclose = () => {
      onClosed(this.transport.sessionId);
      this.dispose();
    };
    this.server.onerror = (error) => this.#reportError(error);
    this.#unlisten = handlers.registry.onChange((taskId) =>
      this.#tracked.get(taskId)?.follower.refresh(),
    );
    this.#register();
  }

  connect(): Promise<void> {
    return this.server.connect(this.transport);
  }

  /** The stream of an in-flight request, as a channel for side requests. */
  #requestChannel(ctx: ServerContext, signal: AbortSignal): DeliveryChannel {
    return this.#channel("tasks/result", signal, (request, options) =>
      ctx.mcpReq.send(request, options),
    );
  }

  /** A delivery channel that sends side requests with `send`, with the session's timeout. */
  #channel(
    kind: DeliveryChannel["kind"],
    signal: AbortSignal,
    send: (
      request: SideRequest,
      options: { signal: AbortSignal; timeout: number },
    ) => Promise<unknown>,
  ): DeliveryChannel {
    const timeout = this.#options.inputRequestTimeoutMs ?? 600_000;
    return {
      kind,
      clientCapabilities: this.server.getClientCapabilities() as
        | Record<string, unknown>
        | undefined,
      signal,
      send: async (request: SideRequest, sendSignal: AbortSignal) => {
        try {
          return (await send(request, { signal: sendSignal, timeout })) as Record<string, unknown>;
        } catch (error) {
          throw clientError(error);
        }
      },
    };
  }

  #register(): void {
    const handlers = this.#handlers;
    const server = this.server;
    const owner = this.owner;
    const signalOf = (ctx: ServerContext) => anySignal(ctx.mcpReq.signal, ctx.http?.req?.signal);
    server.setRequestHandler("tools/list", () => handlers.listTools() as never);
    server.setRequestHandler("tools/call", async (request, ctx) => {
      const signal = signalOf(ctx);
      const result = await handlers.callTool(owner, request.params, {
        signal,
        channel: this.#requestChannel(ctx, signal),
      });
      const created = CreateTaskResultSchema.safeParse(result);
      if (created.success) {
        const { task } = created.data;
        const progressToken = (
          request.params._meta as { progressToken?: string | number } | undefined
        )?.progressToken;
        this.track(task.taskId, task.status, task.statusMessage, progressToken);
        // The 2025 codec of @modelcontextprotocol/server 2.4 requires `content` next to `task`.
        return { ...result, content: [] } as never;
      }
      return result as never;
    });
    // The 2025 task methods are not in the SDK's typed method map: register them with an
    // explicit (pass-through) params schema; the handlers validate with the wire schemas.
    const anyParams = { params: z.unknown() };
    server.setRequestHandler("tasks/get", anyParams, async (params) => {
      const task = await handlers.getTask(owner, params);
      this.#acknowledge(task.taskId);
      return task;
    });
    server.setRequestHandler("tasks/result", anyParams, async (params, ctx) => {
      const signal = signalOf(ctx);
      return handlers.getTaskResult(owner, params, {
        signal,
        channel: this.#requestChannel(ctx, signal),
      });
    });
    server.setRequestHandler("tasks/list", anyParams, (params) =>
      handlers.listTasks(owner, params),
    );
    server.setRequestHandler("tasks/cancel", anyParams, (params) =>
      handlers.cancelTask(owner, params),
    );
  }

  /** Starts watching a task this session created: status notifications, progress, input. */
  track(
    taskId: string,
    status: string,
    statusMessage: string | undefined,
    progressToken: string | number | undefined,
  ): void {
    if (this.#closed || this.#tracked.has(taskId)) return;
    const follower = followTask(
      this.#handlers.service,
      this.owner,
      taskId,
      (record) => this.#onRecord(taskId, record),
      () => this.#untrack(taskId),
    );
    const stopProgress =
      progressToken === undefined
        ? () => {}
        : this.#handlers.runner.onProgress((report) => this.#onProgress(report), taskId);
    this.#tracked.set(taskId, {
      follower,
      stopProgress,
      explicitProgress: false,
      lastStatus: status,
      lastMessage: statusMessage,
      progressToken,
      progress: 0,
      acknowledged: false,
      pump: undefined,
      pumpChannel: undefined,
    });
    follower.refresh();
  }

  /**
   * Side requests are pushed on the session stream only after the client has referred to
   * the task (`tasks/get`): the CreateTaskResult and a pushed request travel on different
   * streams, and a client that sees the request first cannot tell which task it is for.
   */
  #acknowledge(taskId: string): void {
    const tracked = this.#tracked.get(taskId);
    if (tracked === undefined || tracked.acknowledged) return;
    tracked.acknowledged = true;
    tracked.follower.refresh();
  }

  #onProgress(report: TaskProgress): void {
    const tracked = this.#tracked.get(report.taskId);
    // Progress only ever increases, and stops at the terminal status.
    if (!tracked || tracked.progressToken === undefined || report.progress <= tracked.progress) {
      return;
    }
    tracked.explicitProgress = true;
    tracked.progress = report.progress;
    this.#notify({
      method: "notifications/progress",
      params: {
        progressToken: tracked.progressToken,
        progress: report.progress,
        ...(report.total !== undefined && { total: report.total }),
        ...(report.message !== undefined && { message: report.message }),
      },
    });
  }

  #untrack(taskId: string): void {
    const tracked = this.#tracked.get(taskId);
    if (!tracked) return;
    tracked.stopProgress();
    tracked.follower.stop();
    this.#tracked.delete(taskId);
  }

  #onRecord(taskId: string, record: TaskRecord): void {
    const tracked = this.#tracked.get(taskId);
    if (!tracked) return;
    const task = toLegacyTask(record);
    const status = legacyStatusOf(record);
    const terminal = isTerminal(record.status);
    const changed = status !== tracked.lastStatus || task.statusMessage !== tracked.lastMessage;
    if (changed && tracked.progressToken !== undefined && !terminal && !tracked.explicitProgress) {
      // Progress keeps the original token while the task runs and stops at terminal.
      tracked.progress += 1;
      this.#notify({
        method: "notifications/progress",
        params: {
          progressToken: tracked.progressToken,
          progress: tracked.progress,
          ...(task.statusMessage !== undefined && { message: task.statusMessage }),
        },
      });
    }
    if (status !== tracked.lastStatus) {
      this.#notify({ method: "notifications/tasks/status", params: task });
    }
    tracked.lastStatus = status;
    tracked.lastMessage = task.statusMessage;
    if (terminal) {
      this.#untrack(taskId);
      this.#handlers.registry.forget(taskId);
      return;
    }
    // Pushed on the session's stream only while no tasks/result stream serves the task.
    const standalone = this.#standalone?.channel;
    if (
      record.status === "input_required" &&
      tracked.acknowledged &&
      standalone !== undefined &&
      this.#handlers.registry.resultChannels(taskId) === 0
    ) {
      if (tracked.pumpChannel !== standalone) {
        tracked.pump = new InputPump(
          this.#handlers.service,
          this.#handlers.registry,
          this.owner,
          taskId,
          standalone,
        );
        tracked.pumpChannel = standalone;
      }
      tracked.pump?.offer(record);
    }
  }

  #notify(notification: { method: string; params: Record<string, unknown> }): void {
    this.server.notification(notification as never).catch((error) => this.#reportError(error));
  }

  /** The session's standalone (GET) SSE stream opened: a new channel for pushes. */
  openStandalone(): () => void {
    this.#standalone?.close();
    const controller = new AbortController();
    const channel = this.#channel("session", controller.signal, (request, options) =>
      this.server.request(request, options),
    );
    const close = () => {
      if (this.#standalone?.channel === channel) this.#standalone = undefined;
      controller.abort();
    };
    this.#standalone = { channel, close };
    for (const tracked of this.#tracked.values()) tracked.follower.refresh();
    return close;
  }

  #reportError(error: unknown): void {
    (this.#options.onError ?? ((e) => console.error("legacy session:", e)))(error);
  }

  dispose(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#unlisten();
    this.#standalone?.close();
    for (const taskId of [...this.#tracked.keys()]) this.#untrack(taskId);
  }

  async close(): Promise<void> {
    this.dispose();
    await this.server.close();
  }
}

/** Wraps an SSE body so that `onEnd` runs when the stream ends or its reader goes away. */
function watchBody(response: Response, onEnd: () => void): Response {
  const body = response.body;
  if (body === null) {
    onEnd();
    return response;
  }
  const reader = body.getReader();
  let ended = false;
  const end = () => {
    if (!ended) {
      ended = true;
      onEnd();
    }
  };
  const wrapped = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          end();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        end();
        controller.error(error);
      }
    },
    async cancel(reason) {
      end();
      await reader.cancel(reason);
    },
  });
  return new Response(wrapped, { status: response.status, headers: response.headers });
}

/**
 * A web-standard, sessionful 2025-11-25 tasks endpoint on `@modelcontextprotocol/server`
 * 2.4: one `WebStandardStreamableHTTPServerTransport` and one low-level `Server` per
 * session. Route legacy traffic to `fetch` (e.g. with `isLegacyRequest`), or mount it with
 * `toNodeHandler` from `@modelcontextprotocol/node`.
 */
export function createLegacyHandler(options: LegacyHandlerOptions): LegacyHandler {
  const handlers = new LegacyTaskHandlers({
    service: options.service,
    runner: options.runner,
    tools: options.tools,
    registry: new InputRegistry(),
  });
  const sessions = new Map<string, LegacySession>();
  const maxSessions = options.maxSessions ?? 10_000;
  const clock = options.clock ?? systemClock;
  const idleMs = options.sessionIdleTimeoutMs ?? 30 * 60_000;
  let closed = false;
  const sweeper =
    idleMs > 0 ? setInterval(() => void closeIdleSessions(), Math.min(idleMs, 60_000)) : undefined;
  sweeper?.unref();

  async function resolveOwner(request: Request): Promise<Owner | Response> {
    try {
      return await options.ownerOf(request);
    } catch {
      return jsonRpcErrorResponse(401, -32001, "Unauthorized");
    }
  }

  async function fetch(request: Request, extra: LegacyFetchExtra = {}): Promise<Response> {
    if (closed) return jsonRpcErrorResponse(503, -32000, "Server is shutting down");
    const owner = await resolveOwner(request);
    if (owner instanceof Response) return owner;
    const sessionId = request.headers.get("mcp-session-id");
    const passThrough = {
      ...(extra.authInfo !== undefined && { authInfo: extra.authInfo }),
    };
    if (sessionId === null) {
      if (request.method !== "POST") {
        return jsonRpcErrorResponse(400, -32000, "Bad Request: Mcp-Session-Id header is required");
      }
      let body = extra.parsedBody;
      if (body === undefined) {
        try {
          body = await request.json();
        } catch {
          return jsonRpcErrorResponse(400, -32700, "Parse error: Invalid JSON");
        }
      }
      const messages = Array.isArray(body) ? body : [body];
      if (!messages.some((m) => isInitializeRequest(m))) {
        return jsonRpcErrorResponse(400, -32000, "Bad Request: Mcp-Session-Id header is required");
      }
      if (sessions.size >= maxSessions) {
        return jsonRpcErrorResponse(503, -32000, "Too many sessions; try again later");
      }
      const session = new LegacySession(
        owner,
        handlers,
        options,
        (id, s) => sessions.set(id, s),
        (id) => {
          if (id !== undefined && sessions.get(id) === session) sessions.delete(id);
        },
      );
      await session.connect();
      session.lastSeen = clock.now();
      const response = await session.transport.handleRequest(request, {
        ...passThrough,
        parsedBody: body,
      });
      if (session.transport.sessionId === undefined) await session.close();
      return response;
    }
    const session = sessions.get(sessionId);
    // A foreign owner gets the same answer as an unknown session.
    if (session === undefined || !sameOwner(session.owner, owner)) {
      return jsonRpcErrorResponse(404, -32001, "Session not found");
    }
    session.lastSeen = clock.now();
    const response = await session.transport.handleRequest(request, {
      ...passThrough,
      ...(extra.parsedBody !== undefined && { parsedBody: extra.parsedBody }),
    });
    if (request.method === "GET" && response.status === 200 && response.body !== null) {
      const close = session.openStandalone();
      request.signal.addEventListener("abort", close, { once: true });
      return watchBody(response, close);
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

  async function closeIdleSessions(): Promise<number> {
    if (idleMs <= 0) return 0;
    const now = clock.now();
    const idle = [...sessions.entries()].filter(([, s]) => !s.busy && now - s.lastSeen >= idleMs);
    for (const [id] of idle) sessions.delete(id);
    await Promise.allSettled(idle.map(([, s]) => s.close()));
    return idle.length;
  }

  return {
    fetch,
    handlers,
    get sessionCount() {
      return sessions.size;
    },
    closeIdleSessions,
    async close() {
      closed = true;
      if (sweeper !== undefined) clearInterval(sweeper);
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.allSettled(all.map((s) => s.close()));
    },
  };
}
