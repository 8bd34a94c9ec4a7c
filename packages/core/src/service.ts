import type { Tracer } from "@opentelemetry/api";
import { taskErrors } from "./errors.js";
import {
  type FollowOptions,
  type FollowSource,
  firstMatching,
  followTask,
  subscribeToTask,
  type TaskSubscriber,
} from "./follow.js";
import { createIdGenerator, type IdGenerator } from "./ids.js";
import type { SubmitInputResult, TakeInputResult } from "./lifecycle.js";
import {
  type ListNewestInput,
  listOwnNewest,
  listOwnTasks,
  type PageSizes,
  pageSizes,
} from "./listing.js";
import { fencedScope, type Owner, type OwnerScope, ownerScope, verifiedRecord } from "./owner.js";
import { type ClaimOptions, noOrphans, type OrphanSweep, supportsQueue } from "./queue-store.js";
import { RunWriter } from "./run-writer.js";
import {
  type CreateTaskInput,
  type ListTasksInput,
  newTaskOf,
  type TaskServiceOptions,
} from "./service-options.js";
import type { TaskChangeListener, TaskPage, TaskStore, Unsubscribe } from "./store.js";
import {
  cancelModeOf,
  type Fence,
  type InputRequest,
  type InputResponse,
  type JsonRpcErrorObject,
  type TaskRecord,
} from "./task.js";
import { createTraced } from "./traced-create.js";
import { coreTracer } from "./tracing.js";
import { resolveTtl, type TtlPolicy, ttlPolicy } from "./ttl.js";

/**
 * The owner-aware front of a {@link TaskStore}: it applies the owner policy, the TTL
 * policy, id generation and page limits, and re-checks ownership on every row the store
 * returns, so a buggy custom store cannot leak another owner's task.
 */
export class TaskService {
  readonly #store: TaskStore;
  readonly ttlPolicy: TtlPolicy;
  readonly requireOwner: boolean;
  readonly pollIntervalMs: number | null;
  /** The tracer of the creation spans (see {@link TaskServiceOptions.tracer}). */
  readonly tracer: Tracer;
  readonly #ids: IdGenerator;
  readonly #pageSizes: PageSizes;
  readonly #waitRecheckMs: number;

  /**
   * How often a follower re-reads a task although no change arrived (see
   * {@link TaskServiceOptions.waitRecheckMs}); 0 when it never does.
   */
  get waitRecheckMs(): number {
    return this.#waitRecheckMs;
  }

  constructor(options: TaskServiceOptions) {
    this.#store = options.store;
    this.requireOwner = options.requireOwner ?? false;
    this.ttlPolicy = ttlPolicy(options.ttl);
    this.pollIntervalMs = options.pollIntervalMs === undefined ? 1000 : options.pollIntervalMs;
    this.#ids = options.ids ?? createIdGenerator();
    this.#pageSizes = pageSizes(options);
    this.#waitRecheckMs = options.waitRecheckMs ?? 30_000;
    this.tracer = options.tracer ?? coreTracer();
  }

  /** The scope a caller acts in; throws `not_found_or_unauthorized` if it may see nothing. */
  scope(caller: Owner): OwnerScope {
    const scope = ownerScope(caller, { requireOwner: this.requireOwner });
    if (scope === null) throw taskErrors.ownerRequired();
    return scope;
  }

  /**
   * Creates a `working` task owned by `caller`; resolves once the task is durable. Traced as
   * a `mcp.task.create` span (a child of `input.traceContext`, else of the active context)
   * whose context is stored with the task, so its runs become children of it.
   */
  async create(caller: Owner, input: CreateTaskInput): Promise<TaskRecord> {
    const scope = this.scope(caller);
    const ttlMs = resolveTtl(this.ttlPolicy, input.ttlMs);
    const taskId = this.#ids();
    // A plain function, not an async one: one promise less on every create.
    return createTraced(this.tracer, taskId, input, (traceContext) => {
      const task = newTaskOf(input, {
        taskId,
        ttlMs,
        ttlAnchor: this.ttlPolicy.anchor,
        pollIntervalMs: this.pollIntervalMs,
        traceContext,
      });
      return this.#store.create(task, scope).then((r) => verifiedRecord(scope, r.taskId, r));
    });
  }

  async get(caller: Owner, taskId: string): Promise<TaskRecord> {
    return this.#guarded(caller, taskId, (scope) => this.#store.get(taskId, scope));
  }

  /** One page of the caller's tasks, oldest first. */
  list(caller: Owner, input: ListTasksInput = {}): Promise<TaskPage> {
    return listOwnTasks(this.#store, this.scope(caller), input, this.#pageSizes);
  }

  /** One page of the caller's tasks, newest first, filtered by status and tool. */
  listNewest(caller: Owner, input: ListNewestInput = {}): Promise<TaskPage> {
    return listOwnNewest(this.#store, this.scope(caller), input, this.#pageSizes);
  }

  async complete(
    caller: Owner,
    taskId: string,
    result: Readonly<Record<string, unknown>>,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    return this.#guarded(caller, taskId, (scope) =>
      this.#store.complete(taskId, scope, result, statusMessage),
    );
  }

  async fail(
    caller: Owner,
    taskId: string,
    error: JsonRpcErrorObject,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    return this.#guarded(caller, taskId, (scope) =>
      this.#store.fail(taskId, scope, error, statusMessage),
    );
  }

  async requireInput(
    caller: Owner,
    taskId: string,
    requests: Readonly<Record<string, InputRequest>>,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    return this.#guarded(caller, taskId, (scope) =>
      this.#store.requireInput(taskId, scope, requests, statusMessage),
    );
  }

  async setStatusMessage(
    caller: Owner,
    taskId: string,
    statusMessage: string | null,
  ): Promise<TaskRecord> {
    return this.#guarded(caller, taskId, (scope) =>
      this.#store.setStatusMessage(taskId, scope, statusMessage),
    );
  }

  /** Records the wish to cancel (cooperative cancellation). */
  async requestCancel(caller: Owner, taskId: string): Promise<TaskRecord> {
    return this.#guarded(caller, taskId, (scope) => this.#store.requestCancel(taskId, scope));
  }

  /** Moves a running task to `cancelled` (the worker's acknowledgement). */
  async markCancelled(
    caller: Owner,
    taskId: string,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    return this.#guarded(caller, taskId, (scope) =>
      this.#store.markCancelled(taskId, scope, statusMessage),
    );
  }

  /**
   * Immediate cancellation: moves the task to `cancelled` (recording the request) in one
   * atomic write before returning; the handler's signal fires on whatever node runs it when
   * the change arrives. Throws `invalid_transition` when the task is already terminal.
   */
  cancelNow(caller: Owner, taskId: string, statusMessage?: string | null): Promise<TaskRecord> {
    // The same write as the worker's acknowledgement; the name says who is asking.
    return this.markCancelled(caller, taskId, statusMessage);
  }

  /**
   * Cancels `task` the way its era does ({@link cancelModeOf}): at once for a 2025-11-25
   * task (`statusMessage` stored; `invalid_transition` when it has ended), by a cooperative
   * request for a 2026-07-28 one. For callers serving tasks of both eras, such as a console.
   */
  cancelAsItsEra(
    caller: Owner,
    task: Pick<TaskRecord, "taskId" | "era">,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    return cancelModeOf(task.era) === "immediate"
      ? this.cancelNow(caller, task.taskId, statusMessage)
      : this.requestCancel(caller, task.taskId);
  }

  async submitInput(
    caller: Owner,
    taskId: string,
    responses: Readonly<Record<string, InputResponse>>,
  ): Promise<SubmitInputResult> {
    const scope = this.scope(caller);
    const result = await this.#store.submitInput(taskId, scope, responses);
    verifiedRecord(scope, taskId, result.task);
    return result;
  }

  async takeInputResponses(caller: Owner, taskId: string): Promise<TakeInputResult> {
    const scope = this.scope(caller);
    const result = await this.#store.takeInputResponses(taskId, scope);
    verifiedRecord(scope, taskId, result.task);
    return result;
  }

  async delete(caller: Owner, taskId: string): Promise<void> {
    await this.#store.delete(taskId, this.scope(caller));
  }

  /** Removes expired terminal tasks; returns how many. */
  cleanupExpired(options?: { limit?: number }): Promise<number> {
    return this.#store.cleanupExpired(options);
  }

  /**
   * Recovers running tasks whose worker lost its lease: requeued while attempts remain,
   * else failed "Worker lost". Nothing for stores that are no task queue.
   */
  recoverOrphans(options?: { limit?: number }): Promise<OrphanSweep> {
    return supportsQueue(this.#store)
      ? this.#store.recoverOrphans(options)
      : Promise.resolve(noOrphans());
  }

  /** True when the store is also the task queue (any node may run any task). */
  get queues(): boolean {
    return supportsQueue(this.#store);
  }

  /**
   * Claims queued tasks for a worker, across owners (a worker serves every owner; each
   * claimed record names the owner it then acts as). Nothing for stores without a queue.
   */
  claim(holder: string, options: ClaimOptions): Promise<TaskRecord[]> {
    return supportsQueue(this.#store) ? this.#store.claim(holder, options) : Promise.resolve([]);
  }

  /**
   * The writes of one run of a task, acting as `caller` (the task's owner), fenced by the
   * run's `fence` on a queue store (unfenced without one).
   */
  forRun(caller: Owner, taskId: string, fence?: Fence): RunWriter {
    const scope = fence === undefined ? this.scope(caller) : fencedScope(this.scope(caller), fence);
    return new RunWriter(this.#store, taskId, scope, (record) =>
      verifiedRecord(scope, taskId, record),
    );
  }

  /** The raw change feed (ids and statuses only; re-read through {@link get} for more). */
  watch(listener: TaskChangeListener, taskId?: string): Unsubscribe {
    return this.#store.watch(listener, taskId);
  }

  /**
   * Follows one task: an async iterable of its records as they change (woken by the change
   * feed, re-read through the caller's scope, each version once), ending after the terminal
   * record. Throws `not_found_or_unauthorized` when the task is gone or not the caller's,
   * `signal.reason` when aborted; retries through `store_unavailable`. See {@link followTask}.
   */
  follow(
    caller: Owner,
    taskId: string,
    options: FollowOptions = {},
  ): AsyncGenerator<TaskRecord, void, undefined> {
    return followTask(this.#followSource(caller, taskId), this.#withRecheck(options));
  }

  /**
   * `options` with their `recheckMs`, the service's by default. By `Object.assign`, not
   * `{ ...options, recheckMs }`: see "Hot paths" in docs/architecture.md (every run
   * subscribes to its task).
   */
  #withRecheck<O extends { readonly recheckMs?: number }>(
    options: O,
  ): O & { readonly recheckMs: number } {
    return Object.assign({}, options, { recheckMs: options.recheckMs ?? this.#waitRecheckMs });
  }

  /** One task as the caller may read it, and its change feed. */
  #followSource(caller: Owner, taskId: string): FollowSource {
    return {
      read: () => this.get(caller, taskId),
      watch: (listener) => this.#store.watch(listener, taskId),
    };
  }

  /**
   * {@link follow} told through callbacks, for a caller that pays for every promise: the
   * subscriber hears each newer record and the end. Returns what stops it. See
   * {@link subscribeToTask}.
   */
  subscribe(
    caller: Owner,
    taskId: string,
    subscriber: TaskSubscriber,
    options: Omit<FollowOptions, "signal"> = {},
  ): Unsubscribe {
    return subscribeToTask(
      this.#followSource(caller, taskId),
      this.#withRecheck(options),
      subscriber,
    );
  }

  /**
   * Resolves with the task once `predicate` holds (see {@link follow}). Rejects with
   * `signal.reason` when aborted, with `not_found_or_unauthorized` if the task disappears,
   * and with `invalid_transition` if it ends without the predicate holding.
   */
  async waitFor(
    caller: Owner,
    taskId: string,
    predicate: (task: TaskRecord) => boolean,
    options: { signal?: AbortSignal } = {},
  ): Promise<TaskRecord> {
    return firstMatching(taskId, this.follow(caller, taskId, options), predicate);
  }

  /** Runs `operation` in the caller's scope and re-checks the record it returns. */
  async #guarded(
    caller: Owner,
    taskId: string,
    operation: (scope: OwnerScope) => Promise<TaskRecord>,
  ): Promise<TaskRecord> {
    const scope = this.scope(caller);
    return verifiedRecord(scope, taskId, await operation(scope));
  }
}
