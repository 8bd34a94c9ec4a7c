import {
  extractTraceContext,
  isTaskError,
  isTerminal,
  type Owner,
  type TaskRecord,
  type TaskService,
} from "@mcp-tasks/core";
import type { CreateTaskOptions, TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Request, RequestId, Result, Task } from "@modelcontextprotocol/sdk/types.js";
import { toLegacyTask } from "../projection.js";
import { UnseenAuthProbe } from "./auth-probe.js";
import {
  bindServingContext,
  defaultSdkOwner,
  ownerContextOf,
  type SdkOwnerContext,
  servingContextKnown,
} from "./context.js";
import {
  invalidCursor,
  mapped,
  noResultStored,
  notFound,
  resultAlreadyStored,
  sdkError,
  terminalUpdate,
} from "./errors.js";
import { LeaseKeeper } from "./leases.js";
import { type SdkTaskStoreOptions, UNSEEN_AUTH_WARNING } from "./options.js";
import type { SdkTaskMessageQueue } from "./queue.js";
import { transitionTo } from "./status-transition.js";

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
 * - Errors read as the SDK's `InMemoryTaskStore`'s (`Task with ID … not found`,
 *   `Cannot store result for task …`, `Cannot update task …`, `Task … has no result
 *   stored`, `Invalid cursor: …`), with the JSON-RPC code the SDK's handlers use for the
 *   condition (`-32602`, or `-32603` for a missing result); a task that failed with a
 *   JSON-RPC error rethrows that error from `getTaskResult`.
 * - A call without a session id made while a request of a transport bound with
 *   {@link SdkTaskStore.bindTransport} is served resolves to that request's owner.
 * - On a queue store, each task is created under a lease held by this process and renewed
 *   until the task ends; a task whose process died fails "Worker lost" (core's
 *   `WORKER_LOST_ERROR`) once its lease runs out, swept by any process's store (see
 *   {@link SdkTaskStoreOptions.lease}). The SDK cannot run a tool's work again, so such a
 *   task is never re-run. Create one store per process and {@link close} it on shutdown.
 */
export class SdkTaskStore implements TaskStore {
  readonly service: TaskService;
  readonly #ownerOf: (context: SdkOwnerContext) => Owner;
  readonly #onError: (error: unknown) => void;
  readonly #leases: LeaseKeeper;
  readonly #authProbe: UnseenAuthProbe;

  constructor(options: SdkTaskStoreOptions) {
    this.service = options.service;
    this.#ownerOf = options.ownerOf ?? defaultSdkOwner;
    this.#onError = options.onError ?? ((error) => console.error("sdk task store:", error));
    this.#leases = new LeaseKeeper(this.service, options.lease ?? {}, this.#onError);
    const onWarning = options.onWarning ?? ((message) => console.warn(message));
    this.#authProbe = new UnseenAuthProbe(() => onWarning(UNSEEN_AUTH_WARNING));
  }

  /** This process's name as the lease holder of the tasks it creates. */
  get holder(): string {
    return this.#leases.holder;
  }

  /**
   * Stops renewing the leases of this process's running tasks (and sweeping orphans): call
   * it on shutdown, before closing the underlying store. Tasks still running then end
   * "Worker lost" once their leases run out, swept by the next process (or a janitor).
   */
  close(): void {
    this.#leases.stop();
    this.#authProbe.stop();
  }

  /**
   * Makes store and queue calls that pass no session id, made while `transport` delivers a
   * message (including the work a handler starts from it), act for that message's session
   * and auth info: what the SDK hands its own handlers as `extra.sessionId` and
   * `extra.authInfo`. Handler code that calls a module-level store without a session id,
   * as the SDK's examples do, then sees the tasks of the client it serves. Call it once per
   * transport, after `server.connect(transport)` (which installs the handler this wraps);
   * it applies to every {@link SdkTaskStore} and {@link SdkTaskMessageQueue}.
   *
   * @returns `transport`
   * @throws Error when `transport` is not connected yet.
   */
  static bindTransport<T extends Pick<Transport, "onmessage" | "sessionId">>(transport: T): T {
    return bindServingContext(transport);
  }

  #owner(sessionId: string | undefined): Owner {
    // The SDK passes the session of every call it makes; without a visible request (an
    // unbound transport) the store cannot see whether that session is authenticated.
    if (sessionId !== undefined && !servingContextKnown()) this.#authProbe.watch(sessionId);
    return this.#ownerOf(ownerContextOf(sessionId));
  }

  async createTask(
    taskParams: CreateTaskOptions,
    _requestId: RequestId,
    request: Request,
    sessionId?: string,
  ): Promise<Task> {
    const caller = this.#owner(sessionId);
    const params = (request.params ?? {}) as {
      name?: unknown;
      arguments?: unknown;
      _meta?: unknown;
    };
    // The creating request's trace context (`_meta.traceparent`), kept with the task.
    const traceContext = extractTraceContext(params._meta);
    const lease = this.#leases.lease();
    try {
      const record = await this.service.create(caller, {
        era: "2025-11-25",
        request: {
          toolName: typeof params.name === "string" ? params.name : request.method,
          arguments:
            typeof params.arguments === "object" && params.arguments !== null
              ? (params.arguments as Record<string, unknown>)
              : {},
        },
        ...(taskParams.ttl !== undefined && { ttlMs: taskParams.ttl }),
        ...(traceContext !== null && { traceContext }),
        // Held by this process while its work runs here. The SDK has no way to run a tool's
        // work again, so there is one attempt: a lost process fails the task "Worker lost".
        ...(lease !== undefined && { lease, execution: { maxAttempts: 1 } }),
      });
      if (lease !== undefined) {
        this.#leases.hold(record.taskId, caller, record.execution.fencingToken);
      }
      return toLegacyTask(record) as Task;
    } catch (error) {
      throw mapped(error, undefined, this.#onError);
    }
  }

  async getTask(taskId: string, sessionId?: string): Promise<Task | null> {
    const record = await this.#find(this.#owner(sessionId), taskId);
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
    try {
      await this.service.complete(caller, taskId, stored);
      this.#leases.release(taskId);
    } catch (error) {
      if (!isTaskError(error, "invalid_transition")) throw mapped(error, taskId, this.#onError);
      const current = await this.#find(caller, taskId);
      if (current === null) throw notFound(taskId);
      // A cancelled task stays cancelled: the work's late result is discarded, not an error.
      if (current.status === "cancelled") return;
      throw resultAlreadyStored(taskId, current);
    }
  }

  async getTaskResult(taskId: string, sessionId?: string): Promise<Result> {
    const record = await this.#find(this.#owner(sessionId), taskId);
    if (record === null) throw notFound(taskId);
    const outcome = record.outcome;
    if (outcome?.kind === "result") return { ...outcome.result } as Result;
    if (outcome?.kind === "error") {
      throw sdkError(outcome.error.code, outcome.error.message, outcome.error.data);
    }
    throw noResultStored(taskId);
  }

  async updateTaskStatus(
    taskId: string,
    status: Task["status"],
    statusMessage?: string,
    sessionId?: string,
  ): Promise<void> {
    const caller = this.#owner(sessionId);
    const current = await this.#find(caller, taskId);
    if (current === null) throw notFound(taskId);
    if (isTerminal(current.status)) throw terminalUpdate(taskId, current, status);
    try {
      await transitionTo(this.service, caller, current, status, statusMessage);
      if (isTerminal(status)) this.#leases.release(taskId);
    } catch (error) {
      if (!isTaskError(error, "invalid_transition")) throw mapped(error, taskId, this.#onError);
      // Another writer (a cancel, the work itself) ended the task meanwhile.
      const now = await this.#find(caller, taskId);
      if (now === null) throw notFound(taskId);
      if (isTerminal(now.status)) throw terminalUpdate(taskId, now, status);
      throw mapped(error, taskId, this.#onError);
    }
  }

  async listTasks(
    cursor?: string,
    sessionId?: string,
  ): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const caller = this.#owner(sessionId);
    try {
      const page = await this.service.list(caller, cursor === undefined ? {} : { cursor });
      const tasks = page.tasks.map((t) => toLegacyTask(t) as Task);
      return page.nextCursor === undefined ? { tasks } : { tasks, nextCursor: page.nextCursor };
    } catch (error) {
      if (isTaskError(error, "invalid_cursor")) throw invalidCursor(cursor);
      throw mapped(error, undefined, this.#onError);
    }
  }

  /** The caller's task, or `null` when it does not exist or is someone else's. */
  async #find(caller: Owner, taskId: string): Promise<TaskRecord | null> {
    try {
      return await this.service.get(caller, taskId);
    } catch (error) {
      if (isTaskError(error, "not_found_or_unauthorized")) return null;
      throw mapped(error, undefined, this.#onError);
    }
  }
}
