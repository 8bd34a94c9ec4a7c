/**
 * `@mcp-tasks/legacy/sdk-task-store`: a drop-in `TaskStore` and `TaskMessageQueue` for
 * `@modelcontextprotocol/sdk` 1.x servers that use its experimental tasks, backed by any
 * `@mcp-tasks/core` store: durable, owner-scoped tasks by changing the server's options and
 * no handler.
 *
 * `@modelcontextprotocol/sdk` is an optional peer dependency used by this entry point only
 * (types only: nothing here imports it at runtime).
 *
 * @packageDocumentation
 */
import { AsyncLocalStorage } from "node:async_hooks";
import {
  isTaskError,
  isTerminal,
  type Owner,
  owner,
  type TaskRecord,
  type TaskService,
} from "@mcp-tasks/core";
import type {
  CreateTaskOptions,
  QueuedMessage,
  TaskMessageQueue,
  TaskStore,
} from "@modelcontextprotocol/sdk/experimental/tasks";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { Request, RequestId, Result, Task } from "@modelcontextprotocol/sdk/types.js";
import { jsonRpcCodeOf } from "./errors.js";
import { toLegacyTask } from "./projection.js";

const authContext = new AsyncLocalStorage<AuthInfo | undefined>();

/**
 * Runs `fn` with `authInfo` as the auth info of the request being served, so the store can
 * take the owner from it. Wrap the transport call, e.g.
 * `withTaskAuth(req.auth, () => transport.handleRequest(req, res, req.body))`; everything
 * the SDK does for that request (and the work it starts) sees it.
 */
export function withTaskAuth<T>(authInfo: AuthInfo | undefined, fn: () => T): T {
  return authContext.run(authInfo, fn);
}

/** What {@link SdkTaskStoreOptions.ownerOf} decides from. */
export interface SdkOwnerContext {
  /** The auth info of the request being served (see {@link withTaskAuth}). */
  readonly authInfo: AuthInfo | undefined;
  /** The SDK session the call belongs to. */
  readonly sessionId: string | undefined;
}

/** Settings of {@link SdkTaskStore}. */
export interface SdkTaskStoreOptions {
  readonly service: TaskService;
  /**
   * The owner of a store call. Default: the auth info's `clientId` (plus `extra.tenantId`
   * when it is a string) when there is auth info; otherwise the SDK session, so that
   * sessions never see each other's tasks (what the SDK's `TaskStore` contract asks).
   */
  readonly ownerOf?: (context: SdkOwnerContext) => Owner;
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

/** An error the SDK turns into a JSON-RPC error with this code. */
function sdkError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * `@modelcontextprotocol/sdk` 1.x `TaskStore` over a {@link TaskService}. The SDK runs the
 * work; this store keeps the tasks, scoped per owner:
 *
 * - `createTask` honours the requested `ttl` within the service's TTL policy;
 *   `pollInterval` comes from the service.
 * - `storeTaskResult(…, 'completed' | 'failed', result)` stores the result as the outcome;
 *   a `failed` result is stored with `isError: true`, which this era reports as `failed`.
 *   A result arriving after the task was cancelled is discarded (the task stays cancelled).
 * - `updateTaskStatus` maps `input_required` to one pending input request (the SDK queues
 *   the real side request itself), `working` back from it, `cancelled` to an immediate
 *   cancel, `completed`/`failed` without a result to an empty result / a `-32603` error.
 * - Unknown and foreign ids read as not found (`null`), as the SDK expects.
 */
export class SdkTaskStore implements TaskStore {
  readonly service: TaskService;
  readonly #ownerOf: (context: SdkOwnerContext) => Owner;

  constructor(options: SdkTaskStoreOptions) {
    this.service = options.service;
    this.#ownerOf = options.ownerOf ?? defaultSdkOwner;
  }

  #owner(sessionId: string | undefined): Owner {
    return this.#ownerOf({ authInfo: authContext.getStore(), sessionId });
  }

  async createTask(
    taskParams: CreateTaskOptions,
    _requestId: RequestId,
    request: Request,
    sessionId?: string,
  ): Promise<Task> {
    const caller = this.#owner(sessionId);
    const params = (request.params ?? {}) as { name?: unknown; arguments?: unknown };
    const record = await this.#call(() =>
      this.service.create(caller, {
        era: "2025-11-25",
        request: {
          toolName: typeof params.name === "string" ? params.name : request.method,
          arguments:
            typeof params.arguments === "object" && params.arguments !== null
              ? (params.arguments as Record<string, unknown>)
              : {},
        },
        ...(taskParams.ttl !== undefined && { ttlMs: taskParams.ttl }),
      }),
    );
    return toLegacyTask(record) as Task;
  }

  async getTask(taskId: string, sessionId?: string): Promise<Task | null> {
    const record = await this.#find(taskId, sessionId);
    return record === null ? null : (toLegacyTask(record) as Task);
  }

  async storeTaskResult(
    taskId: string,
    status: "completed" | "failed",
    result: Result,
    sessionId?: string,
  ): Promise<void> {
    const caller = this.#owner(sessionId);
    const stored =
      status === "failed" && result.isError !== true ? { ...result, isError: true } : result;
    await this.#call(async () => {
      try {
        await this.service.complete(caller, taskId, stored);
      } catch (error) {
        // A cancelled task stays cancelled: the work's late result is discarded, not an error.
        if (!isTaskError(error, "invalid_transition")) throw error;
        if ((await this.service.get(caller, taskId)).status !== "cancelled") throw error;
      }
    });
  }

  async getTaskResult(taskId: string, sessionId?: string): Promise<Result> {
    const record = await this.#find(taskId, sessionId);
    if (record === null) throw sdkError(-32602, `Task ${taskId} not found`);
    const outcome = record.outcome;
    if (outcome?.kind === "result") return { ...outcome.result } as Result;
    if (outcome?.kind === "error") throw sdkError(outcome.error.code, outcome.error.message);
    throw sdkError(-32603, `Task ${taskId} has no result stored`);
  }

  async updateTaskStatus(
    taskId: string,
    status: Task["status"],
    statusMessage?: string,
    sessionId?: string,
  ): Promise<void> {
    const caller = this.#owner(sessionId);
    const message = statusMessage ?? null;
    await this.#call(async () => {
      const current = await this.service.get(caller, taskId);
      if (isTerminal(current.status)) {
        throw sdkError(-32602, `Cannot update task ${taskId}: it is already ${current.status}`);
      }
      switch (status) {
        case "input_required":
          if (current.status === "input_required") {
            await this.service.setStatusMessage(caller, taskId, message);
            return;
          }
          await this.service.requireInput(
            caller,
            taskId,
            { [`sdk-${current.version}`]: { method: "sdk/queued-request" } },
            message,
          );
          return;
        case "working":
          if (current.status === "input_required") {
            const answers = Object.fromEntries(
              Object.keys(current.inputRequests).map((key) => [key, {}]),
            );
            await this.service.submitInput(caller, taskId, answers);
            // Nobody takes these placeholder answers: drain them straight away.
            await this.service.takeInputResponses(caller, taskId);
          }
          await this.service.setStatusMessage(caller, taskId, message);
          return;
        case "cancelled":
          try {
            await this.service.cancelNow(caller, taskId, message);
          } catch (error) {
            // A worker may acknowledge the cancel between cancelNow's two writes.
            if (!isTaskError(error, "invalid_transition")) throw error;
            if ((await this.service.get(caller, taskId)).status !== "cancelled") throw error;
          }
          return;
        case "completed":
          await this.service.complete(caller, taskId, { content: [] }, message);
          return;
        case "failed":
          await this.service.fail(
            caller,
            taskId,
            { code: -32603, message: message ?? "Task failed" },
            message,
          );
          return;
      }
    });
  }

  async listTasks(
    cursor?: string,
    sessionId?: string,
  ): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const caller = this.#owner(sessionId);
    const page = await this.#call(() =>
      this.service.list(caller, cursor === undefined ? {} : { cursor }),
    );
    const tasks = page.tasks.map((t) => toLegacyTask(t) as Task);
    return page.nextCursor === undefined ? { tasks } : { tasks, nextCursor: page.nextCursor };
  }

  async #find(taskId: string, sessionId: string | undefined): Promise<TaskRecord | null> {
    try {
      return await this.service.get(this.#owner(sessionId), taskId);
    } catch (error) {
      if (isTaskError(error, "not_found_or_unauthorized")) return null;
      throw this.#mapped(error);
    }
  }

  async #call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw this.#mapped(error);
    }
  }

  #mapped(error: unknown): unknown {
    return isTaskError(error) ? sdkError(jsonRpcCodeOf(error.code), error.message) : error;
  }
}

/** Settings of {@link SdkTaskMessageQueue}. */
export interface SdkTaskMessageQueueOptions {
  /** Most messages queued per task; default 100 (the SDK's `maxTaskQueueSize` wins if lower). */
  readonly maxPerTask?: number;
  /** Most tasks with queued messages; default 10 000. */
  readonly maxTasks?: number;
}

/**
 * A bounded `TaskMessageQueue`. The SDK keeps the resolvers of queued side requests in the
 * memory of the process that queued them, so their queue is per process by nature: this
 * one is in-process, bounded, and partitioned by session so one session cannot drain
 * another's messages.
 */
export class SdkTaskMessageQueue implements TaskMessageQueue {
  readonly #queues = new Map<string, QueuedMessage[]>();
  readonly #maxPerTask: number;
  readonly #maxTasks: number;

  constructor(options: SdkTaskMessageQueueOptions = {}) {
    this.#maxPerTask = options.maxPerTask ?? 100;
    this.#maxTasks = options.maxTasks ?? 10_000;
  }

  #key(taskId: string, sessionId: string | undefined): string {
    return `${sessionId ?? ""}\u0000${taskId}`;
  }

  async enqueue(
    taskId: string,
    message: QueuedMessage,
    sessionId?: string,
    maxSize?: number,
  ): Promise<void> {
    const key = this.#key(taskId, sessionId);
    let queue = this.#queues.get(key);
    if (queue === undefined) {
      if (this.#queues.size >= this.#maxTasks) {
        throw new Error(`Task message queue is full (${this.#maxTasks} tasks)`);
      }
      queue = [];
      this.#queues.set(key, queue);
    }
    const limit = Math.min(maxSize ?? Number.POSITIVE_INFINITY, this.#maxPerTask);
    if (queue.length >= limit) {
      throw new Error(`Task message queue overflow: queue size (${queue.length}) exceeds ${limit}`);
    }
    queue.push(message);
  }

  async dequeue(taskId: string, sessionId?: string): Promise<QueuedMessage | undefined> {
    const key = this.#key(taskId, sessionId);
    const queue = this.#queues.get(key);
    const message = queue?.shift();
    if (queue?.length === 0) this.#queues.delete(key);
    return message;
  }

  async dequeueAll(taskId: string, sessionId?: string): Promise<QueuedMessage[]> {
    const key = this.#key(taskId, sessionId);
    const queue = this.#queues.get(key) ?? [];
    this.#queues.delete(key);
    return queue;
  }
}

/**
 * The options to spread into `new McpServer(info, { ... })` / `new Server(info, { ... })`:
 * `taskStore` and `taskMessageQueue` over `service`.
 */
export function sdkTaskOptions(
  options: SdkTaskStoreOptions & { readonly queue?: SdkTaskMessageQueueOptions },
): { taskStore: SdkTaskStore; taskMessageQueue: SdkTaskMessageQueue } {
  return {
    taskStore: new SdkTaskStore(options),
    taskMessageQueue: new SdkTaskMessageQueue(options.queue),
  };
}
