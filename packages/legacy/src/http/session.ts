import { randomUUID } from "node:crypto";
import { isRpcError, type Owner, type TraceContext } from "@mcp-tasks/core";
import {
  McpServer,
  Server,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import type { DeliveryChannel } from "../delivery-channel.js";
import { startTaskCall } from "../handlers/call-tool.js";
import { type LegacyTaskHandlers, legacyDepsOf } from "../handlers.js";
import type { CallToolParams } from "../wire.js";
import { type SendOverSdk, sdkChannel } from "./channels.js";
import { registerSessionMethods } from "./session-methods.js";
import type { TableSession } from "./session-table.js";
import { type SessionNotification, TaskNotifier } from "./task-notifier.js";

/** What a session needs from its endpoint. */
export interface SessionOptions {
  readonly handlers: LegacyTaskHandlers;
  readonly serverInfo: { readonly name: string; readonly version: string; readonly title?: string };
  readonly instructions?: string;
  /** How long a side request may wait for its answer. */
  readonly inputRequestTimeoutMs: number;
  readonly onSessionInitialized: (id: string, session: LegacySession) => void;
  readonly onSessionClosed: (id: string | undefined, session: LegacySession) => void;
  readonly onError: (error: unknown) => void;
  /**
   * The user's own server for this session (built by their factory): the task methods are
   * attached to it, and an `McpServer` keeps its tools. Default: a bare server.
   */
  readonly server?: McpServer | Server;
}

/**
 * One initialized 2025-11-25 session: its SDK server and transport, its owner, the methods
 * it serves, and a {@link TaskNotifier} for every task it created.
 */
export class LegacySession implements TableSession {
  readonly owner: Owner;
  readonly server: Server;
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly #options: SessionOptions;
  /** The user's `McpServer`, when the session serves one. */
  readonly #mcp: McpServer | undefined;
  readonly #notifiers = new Map<string, TaskNotifier>();
  readonly #unlisten: () => void;
  #standalone: { channel: DeliveryChannel; close: () => void } | undefined;
  /** GET requests in the transport's hands: each may open the standalone stream there. */
  #standaloneOpening = 0;
  #closed = false;
  lastSeen = 0;
  /** Responses (SSE bodies) still being written. */
  openResponses = 0;

  get busy(): boolean {
    return this.openResponses > 0 || this.#standalone !== undefined;
  }

  constructor(owner: Owner, options: SessionOptions) {
    this.owner = owner;
    this.#options = options;
    const target =
      options.server ??
      new Server(options.serverInfo, {
        capabilities: options.handlers.capabilities,
        ...(options.instructions !== undefined && { instructions: options.instructions }),
      });
    this.#mcp = target instanceof McpServer ? target : undefined;
    this.server = target instanceof McpServer ? target.server : target;
    this.transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => options.onSessionInitialized(id, this),
      onsessionclosed: (id) => options.onSessionClosed(id, this),
    });
    this.transport.onclose = () => {
      options.onSessionClosed(this.transport.sessionId, this);
      this.dispose();
    };
    this.server.onerror = (error) => options.onError(error);
    // A tasks/result stream closed or released a request: the standalone stream may step in.
    this.#unlisten = options.handlers.registry.onChange((taskId) =>
      this.#notifiers.get(taskId)?.reroute(),
    );
    registerSessionMethods(this.server, this.#mcp, {
      owner,
      handlers: options.handlers,
      channel: (signal, send) => this.#channel("tasks/result", signal, send),
      track: (task, progressToken) => this.#track(task, progressToken),
      acknowledge: (taskId) => this.#notifiers.get(taskId)?.acknowledge(),
    });
  }

  connect(): Promise<void> {
    return (this.#mcp ?? this.server).connect(this.transport);
  }

  /** The session is initialized and open: it may answer requests without its transport. */
  get open(): boolean {
    return !this.#closed && this.transport.sessionId !== undefined;
  }

  /**
   * Answers a `tasks/get` of this session without its transport (the lean path for polls):
   * the same handler and the same acknowledgement of the task's notifier as the registered
   * `tasks/get`, and the JSON-RPC response the SDK would send.
   */
  async answerTaskGet(
    id: string | number,
    params: unknown,
    traceContext?: TraceContext,
  ): Promise<Record<string, unknown>> {
    const outcome = await this.#options.handlers.getTask(
      { owner: this.owner, ...(traceContext !== undefined && { traceContext }) },
      params,
    );
    if (isRpcError(outcome)) return { jsonrpc: "2.0", id, error: outcome.error };
    this.#notifiers.get(outcome.result.taskId)?.acknowledge();
    return { result: outcome.result, jsonrpc: "2.0", id };
  }

  /**
   * Answers a task-augmented `tools/call` of this session without its transport (the lean
   * path for creation), when the call surely becomes a task on the session's own server: a
   * tool of the handlers that allows tasks and has no preflight (which would talk to the
   * client on the call's stream). The same handler, the same notifier for the created task
   * and the JSON-RPC response the SDK would send. `undefined` for anything else (a user's
   * server, which may answer the call its own way, included): serve it through the
   * transport.
   */
  async answerToolCall(call: {
    readonly id: string | number;
    readonly name: string;
    readonly params: Record<string, unknown>;
    readonly progressToken?: string | number;
    readonly traceContext?: TraceContext;
  }): Promise<Record<string, unknown> | undefined> {
    if (this.#options.server !== undefined) return undefined;
    const tool = this.#options.handlers.tools.get(call.name);
    if (tool === undefined || tool.preflight !== undefined || tool.taskMode === "never") {
      return undefined;
    }
    // The match checked the params as `tools/call`'s schema would, and the tool is checked
    // above: the task is started without checking them again.
    const outcome = await startTaskCall(
      legacyDepsOf(this.#options.handlers),
      {
        owner: this.owner,
        ...(call.traceContext !== undefined && { traceContext: call.traceContext }),
      },
      tool,
      call.params as CallToolParams,
    );
    if (isRpcError(outcome)) return { jsonrpc: "2.0", id: call.id, error: outcome.error };
    this.#track(outcome.result.task, call.progressToken);
    // As the registered handler answers, after the 2025 codec (which wants `content` next
    // to `task`, and writes it first).
    return { result: { content: [], ...outcome.result }, jsonrpc: "2.0", id: call.id };
  }

  /** A delivery channel with the session's client capabilities and side-request timeout. */
  #channel(kind: DeliveryChannel["kind"], signal: AbortSignal, send: SendOverSdk) {
    const capabilities = this.server.getClientCapabilities() as Record<string, unknown> | undefined;
    return sdkChannel(kind, signal, capabilities, this.#options.inputRequestTimeoutMs, send);
  }

  /** Starts notifying about a task this session created. */
  #track(
    task: { taskId: string; status: string; statusMessage?: string | undefined },
    progressToken: string | number | undefined,
  ): void {
    if (this.#closed || this.#notifiers.has(task.taskId)) return;
    const notifier = new TaskNotifier(
      {
        deps: this.#options.handlers,
        owner: this.owner,
        notify: (notification) => this.#notify(notification),
        listening: () => this.#listening(),
        standaloneChannel: () => this.#standalone?.channel,
        reportError: (error) => this.#options.onError(error),
      },
      task,
      progressToken,
      () => {
        if (this.#notifiers.get(task.taskId) === notifier) this.#notifiers.delete(task.taskId);
      },
    );
    this.#notifiers.set(task.taskId, notifier);
  }

  /** Whether a notification reaches the client: the standalone stream is open or opening. */
  #listening(): boolean {
    return this.#standalone !== undefined || this.#standaloneOpening > 0;
  }

  #notify(notification: SessionNotification): void {
    // Without a standalone stream, open or opening, the transport drops the notification
    // (this session keeps no event store), after validating it: 6 % of the CPU of a
    // task-creating `tools/call` whose client listens on no stream.
    if (!this.#listening()) return;
    this.server.notification(notification as never).catch((error) => this.#options.onError(error));
  }

  /**
   * A GET request goes to the transport, which may open the standalone stream before
   * {@link openStandalone} hears of it: notifications go out meanwhile. The returned
   * function is called once the transport has answered (after `openStandalone`, if it did).
   */
  standaloneOpening(): () => void {
    this.#standaloneOpening += 1;
    for (const notifier of this.#notifiers.values()) notifier.listen();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.#standaloneOpening -= 1;
    };
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
    for (const notifier of this.#notifiers.values()) {
      notifier.listen();
      notifier.reroute();
    }
    return close;
  }

  dispose(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#unlisten();
    this.#standalone?.close();
    for (const notifier of [...this.#notifiers.values()]) notifier.stop();
    this.#notifiers.clear();
  }

  async close(): Promise<void> {
    this.dispose();
    await this.server.close();
  }
}
