/**
 * The SDK's interactive task example server, run against `SdkTaskStore`.
 *
 * Copied from modelcontextprotocol/typescript-sdk (MIT, Copyright (c) 2024 Anthropic, PBC),
 * `src/examples/server/simpleTaskInteractive.ts` at tag 1.30.0
 * (2d889f2b329e46680ec9bdd565de4616c497825a), with the session handling of the published
 * `@modelcontextprotocol/sdk` 1.32.2 (`dist/esm/examples/server/simpleTaskInteractive.js`:
 * a `sessions` map with idle tracking). The handler code (tools, `tasks/get`,
 * `tasks/result`, the task session, queue and result handler) is unchanged but for the
 * result handler's wait (below): it calls the module-level store without a session id
 * (`taskStore.getTask(taskId)`,
 * `store.updateTaskStatus(this.taskId, 'input_required')`, `storeTaskResult(...)`).
 *
 * What changed, and nothing else:
 * - the store: `TaskStoreWithNotifications extends SdkTaskStore` (was `InMemoryTaskStore`),
 *   built with a `TaskService`;
 * - the wiring: `SdkTaskStore.bindTransport(transport)` after `server.connect(transport)`,
 *   so those session-less calls act for the session being served;
 * - hosting: the module-level set-up is in {@link startInteractiveExample}, which listens on
 *   127.0.0.1 port 0 and can be closed, instead of `app.listen(PORT)` and a SIGINT handler
 *   (whose `taskStore.cleanup()` becomes `taskStore.close()`, in `close`; the durable store
 *   itself is closed by its owner);
 * - `console` is silenced for the test run; express's types are spelled out; formatting
 *   and strict-mode typing (`override`, `as CreateTaskOptions`);
 * - the `tasks/result` loop (`TaskResultHandler.handle`) starts waiting for an update or a
 *   message before it reads the task, not after delivering the queued messages: the store
 *   read is a round trip here, and a status update made meanwhile (the answer's `working`,
 *   the result) woke nobody, so the call hung (1 run in 5 to 8 on PostgreSQL).
 */
import { randomUUID } from "node:crypto";
import type { Server as HttpServer, IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { TaskService } from "@mcp-tasks/core";
import {
  type CreateTaskOptions,
  isTerminal,
  type QueuedMessage,
  type QueuedRequest,
  type TaskMessageQueue,
} from "@modelcontextprotocol/sdk/experimental/tasks";
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  type CreateMessageRequest,
  type CreateMessageResult,
  type CreateTaskResult,
  type ElicitRequestFormParams,
  type ElicitResult,
  GetTaskPayloadRequestSchema,
  type GetTaskPayloadResult,
  GetTaskRequestSchema,
  type GetTaskResult,
  type JSONRPCRequest,
  ListToolsRequestSchema,
  type PrimitiveSchemaDefinition,
  RELATED_TASK_META_KEY,
  type RequestId,
  type Result,
  type SamplingMessage,
  type Task,
  type TextContent,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { SdkTaskStore } from "../../src/sdk-task-store.js";

// express's `Request` and `Response` as far as the example uses them (express is the SDK's
// dependency, not this package's, so its types are not at hand).
type ExampleRequest = IncomingMessage & { body?: unknown };
interface ExampleResponse extends ServerResponse {
  status(code: number): this;
  json(body: unknown): this;
  send(body: unknown): this;
}

// The example logs every step; a test run keeps quiet.
const console = { log: (..._args: unknown[]) => {}, error: (..._args: unknown[]) => {} };

// Resolver - Promise-like for passing results between async operations
// ============================================================================

class Resolver<T> {
  private _resolve!: (value: T) => void;
  private _reject!: (error: Error) => void;
  private _promise: Promise<T>;
  private _done = false;

  constructor() {
    this._promise = new Promise<T>((resolve, reject) => {
      this._resolve = resolve;
      this._reject = reject;
    });
  }

  setResult(value: T): void {
    if (this._done) return;
    this._done = true;
    this._resolve(value);
  }

  setException(error: Error): void {
    if (this._done) return;
    this._done = true;
    this._reject(error);
  }

  wait(): Promise<T> {
    return this._promise;
  }

  done(): boolean {
    return this._done;
  }
}

// ============================================================================
// Extended message queue with resolver support and wait functionality
// ============================================================================

interface QueuedRequestWithResolver extends QueuedRequest {
  resolver?: Resolver<Record<string, unknown>>;
  originalRequestId?: RequestId;
}

type QueuedMessageWithResolver = QueuedRequestWithResolver | QueuedMessage;

class TaskMessageQueueWithResolvers implements TaskMessageQueue {
  private queues = new Map<string, QueuedMessageWithResolver[]>();
  private waitResolvers = new Map<string, (() => void)[]>();

  private getQueue(taskId: string): QueuedMessageWithResolver[] {
    let queue = this.queues.get(taskId);
    if (!queue) {
      queue = [];
      this.queues.set(taskId, queue);
    }
    return queue;
  }

  async enqueue(
    taskId: string,
    message: QueuedMessage,
    _sessionId?: string,
    maxSize?: number,
  ): Promise<void> {
    const queue = this.getQueue(taskId);
    if (maxSize !== undefined && queue.length >= maxSize) {
      throw new Error(
        `Task message queue overflow: queue size (${queue.length}) exceeds maximum (${maxSize})`,
      );
    }
    queue.push(message);
    // Notify any waiters
    this.notifyWaiters(taskId);
  }

  async enqueueWithResolver(
    taskId: string,
    message: JSONRPCRequest,
    resolver: Resolver<Record<string, unknown>>,
    originalRequestId: RequestId,
  ): Promise<void> {
    const queue = this.getQueue(taskId);
    const queuedMessage: QueuedRequestWithResolver = {
      type: "request",
      message,
      timestamp: Date.now(),
      resolver,
      originalRequestId,
    };
    queue.push(queuedMessage);
    this.notifyWaiters(taskId);
  }

  async dequeue(
    taskId: string,
    _sessionId?: string,
  ): Promise<QueuedMessageWithResolver | undefined> {
    const queue = this.getQueue(taskId);
    return queue.shift();
  }

  async dequeueAll(taskId: string, _sessionId?: string): Promise<QueuedMessageWithResolver[]> {
    const queue = this.queues.get(taskId) ?? [];
    this.queues.delete(taskId);
    return queue;
  }

  async waitForMessage(taskId: string): Promise<void> {
    // Check if there are already messages
    const queue = this.getQueue(taskId);
    if (queue.length > 0) return;

    // Wait for a message to be added
    return new Promise<void>((resolve) => {
      let waiters = this.waitResolvers.get(taskId);
      if (!waiters) {
        waiters = [];
        this.waitResolvers.set(taskId, waiters);
      }
      waiters.push(resolve);
    });
  }

  private notifyWaiters(taskId: string): void {
    const waiters = this.waitResolvers.get(taskId);
    if (waiters) {
      this.waitResolvers.delete(taskId);
      for (const resolve of waiters) {
        resolve();
      }
    }
  }

  cleanup(): void {
    this.queues.clear();
    this.waitResolvers.clear();
  }
}

// ============================================================================
// Extended task store with wait functionality
// ============================================================================

class TaskStoreWithNotifications extends SdkTaskStore {
  private updateResolvers = new Map<string, (() => void)[]>();

  override async updateTaskStatus(
    taskId: string,
    status: Task["status"],
    statusMessage?: string,
    sessionId?: string,
  ): Promise<void> {
    await super.updateTaskStatus(taskId, status, statusMessage, sessionId);
    this.notifyUpdate(taskId);
  }

  override async storeTaskResult(
    taskId: string,
    status: "completed" | "failed",
    result: Result,
    sessionId?: string,
  ): Promise<void> {
    await super.storeTaskResult(taskId, status, result, sessionId);
    this.notifyUpdate(taskId);
  }

  async waitForUpdate(taskId: string): Promise<void> {
    return new Promise<void>((resolve) => {
      let waiters = this.updateResolvers.get(taskId);
      if (!waiters) {
        waiters = [];
        this.updateResolvers.set(taskId, waiters);
      }
      waiters.push(resolve);
    });
  }

  private notifyUpdate(taskId: string): void {
    const waiters = this.updateResolvers.get(taskId);
    if (waiters) {
      this.updateResolvers.delete(taskId);
      for (const resolve of waiters) {
        resolve();
      }
    }
  }
}

// ============================================================================
// Task Result Handler - delivers queued messages and routes responses
// ============================================================================

class TaskResultHandler {
  private pendingRequests = new Map<RequestId, Resolver<Record<string, unknown>>>();

  constructor(
    private store: TaskStoreWithNotifications,
    private queue: TaskMessageQueueWithResolvers,
  ) {}

  async handle(taskId: string, server: Server, _sessionId: string): Promise<Result> {
    while (true) {
      // Adapted (see the header): listen before reading, so an update made while the task
      // is read or messages are delivered is not lost.
      const changed = this.waitForUpdate(taskId);
      // Get fresh task state
      const task = await this.store.getTask(taskId);
      if (!task) {
        throw new Error(`Task not found: ${taskId}`);
      }

      // Dequeue and send all pending messages
      await this.deliverQueuedMessages(taskId, server, _sessionId);

      // If task is terminal, return result
      if (isTerminal(task.status)) {
        const result = await this.store.getTaskResult(taskId);
        // Add related-task metadata per spec
        return {
          ...result,
          _meta: {
            ...(result._meta || {}),
            [RELATED_TASK_META_KEY]: { taskId },
          },
        };
      }

      // Wait for task update or new message
      await changed;
    }
  }

  private async deliverQueuedMessages(
    taskId: string,
    server: Server,
    _sessionId: string,
  ): Promise<void> {
    while (true) {
      const message = await this.queue.dequeue(taskId);
      if (!message) break;

      console.log(`[Server] Delivering queued ${message.type} message for task ${taskId}`);

      if (message.type === "request") {
        const reqMessage = message as QueuedRequestWithResolver;
        // Send the request via the server
        // Store the resolver so we can route the response back
        if (reqMessage.resolver && reqMessage.originalRequestId) {
          this.pendingRequests.set(reqMessage.originalRequestId, reqMessage.resolver);
        }

        // Send the message - for elicitation/sampling, we use the server's methods
        // But since we're in tasks/result context, we need to send via transport
        // This is simplified - in production you'd use proper message routing
        try {
          const request = reqMessage.message;
          let response: ElicitResult | CreateMessageResult;

          if (request.method === "elicitation/create") {
            // Send elicitation request to client
            const params = request.params as ElicitRequestFormParams;
            response = await server.elicitInput(params);
          } else if (request.method === "sampling/createMessage") {
            // Send sampling request to client
            const params = request.params as CreateMessageRequest["params"];
            response = await server.createMessage(params);
          } else {
            throw new Error(`Unknown request method: ${request.method}`);
          }

          // Route response back to resolver
          if (reqMessage.resolver) {
            reqMessage.resolver.setResult(response as unknown as Record<string, unknown>);
          }
        } catch (error) {
          if (reqMessage.resolver) {
            reqMessage.resolver.setException(
              error instanceof Error ? error : new Error(String(error)),
            );
          }
        }
      }
      // For notifications, we'd send them too but this example focuses on requests
    }
  }

  private async waitForUpdate(taskId: string): Promise<void> {
    // Race between store update and queue message
    await Promise.race([this.store.waitForUpdate(taskId), this.queue.waitForMessage(taskId)]);
  }

  routeResponse(requestId: RequestId, response: Record<string, unknown>): boolean {
    const resolver = this.pendingRequests.get(requestId);
    if (resolver && !resolver.done()) {
      this.pendingRequests.delete(requestId);
      resolver.setResult(response);
      return true;
    }
    return false;
  }

  routeError(requestId: RequestId, error: Error): boolean {
    const resolver = this.pendingRequests.get(requestId);
    if (resolver && !resolver.done()) {
      this.pendingRequests.delete(requestId);
      resolver.setException(error);
      return true;
    }
    return false;
  }
}

// ============================================================================
// Task Session - wraps server to enqueue requests during task execution
// ============================================================================

class TaskSession {
  private requestCounter = 0;

  constructor(
    // biome-ignore lint/correctness/noUnusedPrivateClassMembers: kept as in the example
    private server: Server,
    private taskId: string,
    private store: TaskStoreWithNotifications,
    private queue: TaskMessageQueueWithResolvers,
  ) {}

  private nextRequestId(): string {
    return `task-${this.taskId}-${++this.requestCounter}`;
  }

  async elicit(
    message: string,
    requestedSchema: {
      type: "object";
      properties: Record<string, PrimitiveSchemaDefinition>;
      required?: string[];
    },
  ): Promise<{ action: string; content?: Record<string, unknown> }> {
    // Update task status to input_required
    await this.store.updateTaskStatus(this.taskId, "input_required");

    const requestId = this.nextRequestId();

    // Build the elicitation request with related-task metadata
    const params: ElicitRequestFormParams = {
      message,
      requestedSchema,
      mode: "form",
      _meta: {
        [RELATED_TASK_META_KEY]: { taskId: this.taskId },
      },
    };

    const jsonrpcRequest: JSONRPCRequest = {
      jsonrpc: "2.0",
      id: requestId,
      method: "elicitation/create",
      params,
    };

    // Create resolver to wait for response
    const resolver = new Resolver<Record<string, unknown>>();

    // Enqueue the request
    await this.queue.enqueueWithResolver(this.taskId, jsonrpcRequest, resolver, requestId);

    try {
      // Wait for response
      const response = await resolver.wait();

      // Update status back to working
      await this.store.updateTaskStatus(this.taskId, "working");

      return response as { action: string; content?: Record<string, unknown> };
    } catch (error) {
      await this.store.updateTaskStatus(this.taskId, "working");
      throw error;
    }
  }

  async createMessage(
    messages: SamplingMessage[],
    maxTokens: number,
  ): Promise<{ role: string; content: TextContent | { type: string } }> {
    // Update task status to input_required
    await this.store.updateTaskStatus(this.taskId, "input_required");

    const requestId = this.nextRequestId();

    // Build the sampling request with related-task metadata
    const params = {
      messages,
      maxTokens,
      _meta: {
        [RELATED_TASK_META_KEY]: { taskId: this.taskId },
      },
    };

    const jsonrpcRequest: JSONRPCRequest = {
      jsonrpc: "2.0",
      id: requestId,
      method: "sampling/createMessage",
      params,
    };

    // Create resolver to wait for response
    const resolver = new Resolver<Record<string, unknown>>();

    // Enqueue the request
    await this.queue.enqueueWithResolver(this.taskId, jsonrpcRequest, resolver, requestId);

    try {
      // Wait for response
      const response = await resolver.wait();

      // Update status back to working
      await this.store.updateTaskStatus(this.taskId, "working");

      return response as { role: string; content: TextContent | { type: string } };
    } catch (error) {
      await this.store.updateTaskStatus(this.taskId, "working");
      throw error;
    }
  }
}

/** A running copy of the example: its endpoint, and how to stop it. */
export interface RunningExample {
  readonly url: URL;
  close(): Promise<void>;
}

/** Starts the example's server over `service` on 127.0.0.1 (a free port). */
export async function startInteractiveExample(service: TaskService): Promise<RunningExample> {
  // Create shared stores
  const taskStore = new TaskStoreWithNotifications({ service });
  const messageQueue = new TaskMessageQueueWithResolvers();
  const taskResultHandler = new TaskResultHandler(taskStore, messageQueue);

  // Track active task executions
  const activeTaskExecutions = new Map<
    string,
    {
      promise: Promise<void>;
      server: Server;
      sessionId: string;
    }
  >();

  // Create the server
  const createServer = (): Server => {
    const server = new Server(
      { name: "simple-task-interactive", version: "1.0.0" },
      {
        capabilities: {
          tools: {},
          tasks: {
            requests: {
              tools: { call: {} },
            },
          },
        },
      },
    );

    // Register tools
    server.setRequestHandler(ListToolsRequestSchema, async (): Promise<{ tools: Tool[] }> => {
      return {
        tools: [
          {
            name: "confirm_delete",
            description: "Asks for confirmation before deleting (demonstrates elicitation)",
            inputSchema: {
              type: "object",
              properties: {
                filename: { type: "string" },
              },
            },
            execution: { taskSupport: "required" },
          },
          {
            name: "write_haiku",
            description: "Asks LLM to write a haiku (demonstrates sampling)",
            inputSchema: {
              type: "object",
              properties: {
                topic: { type: "string" },
              },
            },
            execution: { taskSupport: "required" },
          },
        ],
      };
    });

    // Handle tool calls
    server.setRequestHandler(
      CallToolRequestSchema,
      async (request, extra): Promise<CallToolResult | CreateTaskResult> => {
        const { name, arguments: args } = request.params;
        const taskParams = (request.params._meta?.task || request.params.task) as
          | { ttl?: number; pollInterval?: number }
          | undefined;

        // Validate task mode - these tools require tasks
        if (!taskParams) {
          throw new Error(`Tool ${name} requires task mode`);
        }

        // Create task
        const taskOptions = {
          ttl: taskParams.ttl,
          pollInterval: taskParams.pollInterval ?? 1000,
        } as CreateTaskOptions;

        const task = await taskStore.createTask(
          taskOptions,
          extra.requestId,
          request,
          extra.sessionId,
        );

        console.log(`\n[Server] ${name} called, task created: ${task.taskId}`);

        // Start background task execution
        const taskExecution = (async () => {
          try {
            const taskSession = new TaskSession(server, task.taskId, taskStore, messageQueue);

            if (name === "confirm_delete") {
              const filename = args?.filename ?? "unknown.txt";
              console.log(`[Server] confirm_delete: asking about '${filename}'`);

              console.log("[Server] Sending elicitation request to client...");
              const result = await taskSession.elicit(
                `Are you sure you want to delete '${filename}'?`,
                {
                  type: "object",
                  properties: {
                    confirm: { type: "boolean" },
                  },
                  required: ["confirm"],
                },
              );

              console.log(
                `[Server] Received elicitation response: action=${result.action}, content=${JSON.stringify(result.content)}`,
              );

              let text: string;
              if (result.action === "accept" && result.content) {
                const confirmed = result.content.confirm;
                text = confirmed ? `Deleted '${filename}'` : "Deletion cancelled";
              } else {
                text = "Deletion cancelled";
              }

              console.log(`[Server] Completing task with result: ${text}`);
              await taskStore.storeTaskResult(task.taskId, "completed", {
                content: [{ type: "text", text }],
              });
            } else if (name === "write_haiku") {
              const topic = args?.topic ?? "nature";
              console.log(`[Server] write_haiku: topic '${topic}'`);

              console.log("[Server] Sending sampling request to client...");
              const result = await taskSession.createMessage(
                [
                  {
                    role: "user",
                    content: { type: "text", text: `Write a haiku about ${topic}` },
                  },
                ],
                50,
              );

              let haiku = "No response";
              if (result.content && "text" in result.content) {
                haiku = (result.content as TextContent).text;
              }

              console.log(`[Server] Received sampling response: ${haiku.substring(0, 50)}...`);
              console.log("[Server] Completing task with haiku");
              await taskStore.storeTaskResult(task.taskId, "completed", {
                content: [{ type: "text", text: `Haiku:\n${haiku}` }],
              });
            }
          } catch (error) {
            console.error(`[Server] Task ${task.taskId} failed:`, error);
            await taskStore.storeTaskResult(task.taskId, "failed", {
              content: [{ type: "text", text: `Error: ${error}` }],
              isError: true,
            });
          } finally {
            activeTaskExecutions.delete(task.taskId);
          }
        })();

        activeTaskExecutions.set(task.taskId, {
          promise: taskExecution,
          server,
          sessionId: extra.sessionId ?? "",
        });

        return { task };
      },
    );

    // Handle tasks/get
    server.setRequestHandler(GetTaskRequestSchema, async (request): Promise<GetTaskResult> => {
      const { taskId } = request.params;
      const task = await taskStore.getTask(taskId);
      if (!task) {
        throw new Error(`Task ${taskId} not found`);
      }
      return task;
    });

    // Handle tasks/result
    server.setRequestHandler(
      GetTaskPayloadRequestSchema,
      async (request, extra): Promise<GetTaskPayloadResult> => {
        const { taskId } = request.params;
        console.log(`[Server] tasks/result called for task ${taskId}`);
        return taskResultHandler.handle(taskId, server, extra.sessionId ?? "");
      },
    );

    return server;
  };

  // ============================================================================
  // Express App Setup
  // ============================================================================

  const app = createMcpExpressApp();

  // Close sessions that have been idle for IDLE_MS, and keep at most MAX_SESSIONS open
  const IDLE_MS = 30 * 60000;
  const MAX_SESSIONS = 1000;
  interface Session {
    transport: StreamableHTTPServerTransport;
    open: number;
    lastActive: number;
  }
  const sessions = new Map<string, Session>();

  // Count open responses so a long-running request or a listening SSE stream is not treated as idle
  const trackResponse = (session: Session, res: ServerResponse) => {
    if (!res.socket || res.destroyed) return;
    session.open++;
    res.on("close", () => {
      session.open--;
      session.lastActive = Date.now();
    });
  };

  // Close sessions with nothing open and no activity for IDLE_MS
  const idleTimer = setInterval(() => {
    const cutoff = Date.now() - IDLE_MS;
    for (const { transport, open, lastActive } of sessions.values()) {
      if (open === 0 && lastActive < cutoff) transport.close().catch(console.error);
    }
  }, 60000).unref();

  // Helper to check if request is initialize
  const isInitializeRequest = (body: unknown): boolean => {
    return (
      typeof body === "object" &&
      body !== null &&
      "method" in body &&
      (body as { method: string }).method === "initialize"
    );
  };

  // MCP POST endpoint
  app.post("/mcp", async (req: ExampleRequest, res: ExampleResponse) => {
    const sessionId = req.headers["mcp-session-id"] as string | undefined;
    try {
      const session = sessionId ? sessions.get(sessionId) : undefined;
      let transport: StreamableHTTPServerTransport;
      if (session) {
        transport = session.transport;
        trackResponse(session, res);
      } else if (!sessionId && isInitializeRequest(req.body)) {
        if (sessions.size >= MAX_SESSIONS) {
          res.status(503).json({
            jsonrpc: "2.0",
            error: { code: -32000, message: "Too many open sessions" },
            id: null,
          });
          return;
        }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => {
            console.log(`Session initialized: ${sid}`);
            sessions.set(sid, { transport, open: 0, lastActive: Date.now() });
          },
        });
        transport.onclose = () => {
          const sid = transport.sessionId;
          if (sid && sessions.has(sid)) {
            console.log(`Transport closed for session ${sid}`);
            sessions.delete(sid);
          }
        };
        const server = createServer();
        await server.connect(transport);
        // The one added line: session-less store calls made while this transport's
        // messages are served act for its session.
        SdkTaskStore.bindTransport(transport);
        await transport.handleRequest(req, res, req.body);
        return;
      } else if (sessionId) {
        // Unknown or expired session ID - the client should start a new session
        res.status(404).json({
          jsonrpc: "2.0",
          error: { code: -32001, message: "Session not found" },
          id: null,
        });
        return;
      } else {
        res.status(400).json({
          jsonrpc: "2.0",
          error: { code: -32000, message: "Bad Request: No valid session ID" },
          id: null,
        });
        return;
      }
      await transport.handleRequest(req, res, req.body);
    } catch (error) {
      console.error("Error handling MCP request:", error);
      if (!res.headersSent) {
        res.status(500).json({
          jsonrpc: "2.0",
          error: { code: -32603, message: "Internal server error" },
          id: null,
        });
      }
    }
  });

  // Handle GET requests for SSE streams
  app.get("/mcp", async (req: ExampleRequest, res: ExampleResponse) => {
    const sessionId = req.headers["mcp-session-id"] as string | undefined;
    if (!sessionId) {
      res.status(400).send("Missing session ID");
      return;
    }
    const session = sessions.get(sessionId);
    if (!session) {
      // Unknown or expired session ID - the client should start a new session
      res.status(404).json({
        jsonrpc: "2.0",
        error: { code: -32001, message: "Session not found" },
        id: null,
      });
      return;
    }
    trackResponse(session, res);
    await session.transport.handleRequest(req, res);
  });

  // Handle DELETE requests for session termination
  app.delete("/mcp", async (req: ExampleRequest, res: ExampleResponse) => {
    const sessionId = req.headers["mcp-session-id"] as string | undefined;
    if (!sessionId) {
      res.status(400).send("Missing session ID");
      return;
    }
    const session = sessions.get(sessionId);
    if (!session) {
      // Unknown or expired session ID - the client should start a new session
      res.status(404).json({
        jsonrpc: "2.0",
        error: { code: -32001, message: "Session not found" },
        id: null,
      });
      return;
    }
    console.log(`Session termination request: ${sessionId}`);
    trackResponse(session, res);
    await session.transport.handleRequest(req, res);
  });

  // Start server (adapted: 127.0.0.1, a free port)
  const http = await new Promise<HttpServer>((resolve) => {
    const listening: HttpServer = app.listen(0, "127.0.0.1", () => resolve(listening));
  });
  const { port } = http.address() as AddressInfo;

  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    async close() {
      clearInterval(idleTimer);
      for (const [sessionId, { transport }] of sessions) {
        await transport.close();
        sessions.delete(sessionId);
      }
      messageQueue.cleanup();
      taskStore.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
