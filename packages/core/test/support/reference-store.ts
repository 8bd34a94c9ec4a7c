/**
 * A small, obviously correct in-memory `TaskQueueStore` for core's own tests, built only
 * from core's pure lifecycle functions: a `Map` in creation order, linear scans, no indexes
 * and no performance work. Every method runs to completion without awaiting, so each
 * operation is atomic. `test/contract.test.ts` proves it passes `describeTaskStoreContract`
 * and `describeQueueStoreContract`, so the service and runner tests that run over it run
 * over a reference implementation. {@link plainTaskStore} hides the queue, for tests of the
 * paths taken with a store that is no task queue.
 */
import {
  type ClaimOptions,
  type Clock,
  type InputRequest,
  type InputResponse,
  isTerminal,
  type JsonRpcErrorObject,
  type OrphanSweep,
  type OwnerLimits,
  type SubmitInputResult,
  systemClock,
  type TakeInputResult,
  type TaskChange,
  type TaskChangeKind,
  type TaskChangeListener,
  type TaskPage,
  type TaskRecord,
  type TaskStatus,
  type TaskStore,
  type Unsubscribe,
} from "../../src/index.js";
import {
  assertFence,
  assertIntentAllowed,
  ChangeFeed,
  changeOf,
  claimTask,
  completeTask,
  countedRunning,
  decodeSequenceCursor,
  encodeCursor,
  failTask,
  type Intent,
  isClaimable,
  isExpired,
  isOrphaned,
  type ListQuery,
  markTaskCancelled,
  type NewestQuery,
  type NewTask,
  newTaskRecord,
  nextAttempt,
  type OwnerScope,
  orphanSweepOf,
  recoverOrphan,
  releaseTask,
  renewTaskLease,
  requestTaskCancel,
  requeueTask,
  requireTaskInput,
  scopeAllowsKey,
  setTaskStatusMessage,
  submitTaskInput,
  type TaskQueueStore,
  takeTaskInputResponses,
  taskErrors,
  taskPayloadBytes,
  underOwnerLimits,
  underRunningLimit,
  validateClaim,
  validateLeaseMs,
  validateNewTask,
} from "../../src/store-api.js";

/** Settings of a {@link ReferenceTaskStore}; no bounds unless given. */
export interface ReferenceTaskStoreOptions {
  readonly clock?: Clock;
  readonly maxTasks?: number;
  readonly maxTasksPerOwner?: number;
  /** Most payload bytes (arguments, results, input answers) one owner's tasks may hold. */
  readonly maxBytesPerOwner?: number;
  /** Largest page `list` returns; default 100. */
  readonly maxPageSize?: number;
}

interface Entry {
  record: TaskRecord;
  /** Creation order; the keyset position a cursor points after. */
  readonly seq: number;
  readonly ownerKey: string;
}

export class ReferenceTaskStore implements TaskQueueStore {
  readonly #clock: Clock;
  readonly #maxTasks: number;
  readonly #maxTasksPerOwner: number;
  readonly #maxBytesPerOwner: number;
  readonly #maxPageSize: number;
  /** By task id; a `Map` iterates in insertion order, which is creation order. */
  readonly #tasks = new Map<string, Entry>();
  readonly #feed = new ChangeFeed();
  readonly #queue: TaskChange[] = [];
  #delivering = false;
  #seq = 0;
  #closed = false;

  constructor(options: ReferenceTaskStoreOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#maxTasks = options.maxTasks ?? Number.POSITIVE_INFINITY;
    this.#maxTasksPerOwner = options.maxTasksPerOwner ?? Number.POSITIVE_INFINITY;
    this.#maxBytesPerOwner = options.maxBytesPerOwner ?? Number.POSITIVE_INFINITY;
    this.#maxPageSize = options.maxPageSize ?? 100;
  }

  async create(input: NewTask, scope: OwnerScope): Promise<TaskRecord> {
    this.#open();
    const now = this.#clock.now();
    validateNewTask(input);
    const limits = input.ownerLimits ?? {};
    const task = underOwnerLimits(
      input,
      this.#running(scope.ownerKey, limits),
      this.#queuedOf(scope.ownerKey),
    );
    const record = newTaskRecord(task, scope.owner, now);
    if (this.#tasks.has(record.taskId)) throw taskErrors.alreadyExists(record.taskId);
    // Expired tasks are gone for every call, so they do not count against the bounds.
    const live = [...this.#tasks.values()].filter((e) => !isExpired(e.record, now));
    if (live.length >= this.#maxTasks) throw taskErrors.storeFull("maxTasks", this.#maxTasks);
    if (live.filter((e) => e.ownerKey === scope.ownerKey).length >= this.#maxTasksPerOwner) {
      throw taskErrors.storeFull("maxTasksPerOwner", this.#maxTasksPerOwner);
    }
    this.#assertBytesRoom(scope.ownerKey, taskPayloadBytes(record), now);
    this.#tasks.set(record.taskId, { record, seq: ++this.#seq, ownerKey: scope.ownerKey });
    this.#changed(record, "created");
    // Created without a worker: it is in the queue from the start.
    if (record.execution.holder === null) this.#changed(record, "queued");
    return record;
  }

  async get(taskId: string, scope: OwnerScope): Promise<TaskRecord> {
    return this.#find(taskId, scope).record;
  }

  async list(scope: OwnerScope, query: ListQuery): Promise<TaskPage> {
    this.#open();
    const after = query.cursor === undefined ? 0 : decodeSequenceCursor(query.cursor);
    const limit = Math.max(1, Math.min(Math.floor(query.limit) || 1, this.#maxPageSize));
    const wanted: ReadonlySet<TaskStatus> | null =
      query.statuses && query.statuses.length > 0 ? new Set(query.statuses) : null;
    const now = this.#clock.now();
    const matches = [...this.#tasks.values()].filter(
      (e) =>
        e.seq > after &&
        scopeAllowsKey(scope, e.ownerKey) &&
        !isExpired(e.record, now) &&
        (wanted === null || wanted.has(e.record.status)),
    );
    const page = matches.slice(0, limit);
    const tasks = page.map((e) => e.record);
    if (matches.length <= limit) return { tasks };
    return { tasks, nextCursor: encodeCursor(page[page.length - 1]!.seq) };
  }

  async listNewest(scope: OwnerScope, query: NewestQuery): Promise<TaskPage> {
    return this.#newest(query, (e) => scopeAllowsKey(scope, e.ownerKey));
  }

  async listNewestAcrossOwners(query: NewestQuery): Promise<TaskPage> {
    return this.#newest(query, () => true);
  }

  async getAcrossOwners(taskId: string): Promise<TaskRecord> {
    this.#open();
    const entry = this.#tasks.get(taskId);
    if (entry === undefined || isExpired(entry.record, this.#clock.now())) {
      throw taskErrors.notFound(taskId);
    }
    return entry.record;
  }

  #newest(query: NewestQuery, visible: (e: Entry) => boolean): TaskPage {
    this.#open();
    const before =
      query.cursor === undefined ? Number.POSITIVE_INFINITY : decodeSequenceCursor(query.cursor);
    const limit = Math.max(1, Math.min(Math.floor(query.limit) || 1, this.#maxPageSize));
    const statuses = query.statuses && query.statuses.length > 0 ? new Set(query.statuses) : null;
    const tools = query.toolNames && query.toolNames.length > 0 ? new Set(query.toolNames) : null;
    const now = this.#clock.now();
    const matches = [...this.#tasks.values()]
      .filter(
        (e) =>
          e.seq < before &&
          visible(e) &&
          !isExpired(e.record, now) &&
          (statuses === null || statuses.has(e.record.status)) &&
          (tools === null || tools.has(e.record.request.toolName)),
      )
      .reverse();
    const page = matches.slice(0, limit);
    const tasks = page.map((e) => e.record);
    if (matches.length <= limit) return { tasks };
    return { tasks, nextCursor: encodeCursor(page[page.length - 1]!.seq) };
  }

  async complete(
    taskId: string,
    scope: OwnerScope,
    result: Readonly<Record<string, unknown>>,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    const entry = this.#fenced(taskId, scope, "complete");
    const next = completeTask(entry.record, this.#clock.now(), result, statusMessage);
    return this.#replace(entry, next, "status_changed");
  }

  async fail(
    taskId: string,
    scope: OwnerScope,
    error: JsonRpcErrorObject,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    const entry = this.#fenced(taskId, scope, "fail");
    const next = failTask(entry.record, this.#clock.now(), error, statusMessage);
    return this.#replace(entry, next, "status_changed");
  }

  async requireInput(
    taskId: string,
    scope: OwnerScope,
    requests: Readonly<Record<string, InputRequest>>,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    const entry = this.#fenced(taskId, scope, "requireInput");
    const next = requireTaskInput(entry.record, this.#clock.now(), requests, statusMessage);
    return this.#replace(entry, next, "input_requested");
  }

  async setStatusMessage(
    taskId: string,
    scope: OwnerScope,
    statusMessage: string | null,
  ): Promise<TaskRecord> {
    const entry = this.#fenced(taskId, scope, "setStatusMessage");
    const next = setTaskStatusMessage(entry.record, this.#clock.now(), statusMessage);
    return this.#replace(entry, next, "status_message");
  }

  async requestCancel(taskId: string, scope: OwnerScope): Promise<TaskRecord> {
    const entry = this.#find(taskId, scope);
    const next = requestTaskCancel(entry.record, this.#clock.now());
    // The same record back means nothing changed: no version bump, no event.
    return next === entry.record ? next : this.#replace(entry, next, "cancel_requested");
  }

  async markCancelled(
    taskId: string,
    scope: OwnerScope,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    const entry = this.#fenced(taskId, scope, "markCancelled");
    const next = markTaskCancelled(entry.record, this.#clock.now(), statusMessage);
    return this.#replace(entry, next, "status_changed");
  }

  async submitInput(
    taskId: string,
    scope: OwnerScope,
    responses: Readonly<Record<string, InputResponse>>,
  ): Promise<SubmitInputResult> {
    const entry = this.#find(taskId, scope);
    const now = this.#clock.now();
    const result = submitTaskInput(entry.record, now, responses);
    if (result.acceptedKeys.length === 0) return result;
    // Answers are client data kept for the task's lifetime: they count against its owner.
    const added = taskPayloadBytes(result.task) - taskPayloadBytes(entry.record);
    this.#assertBytesRoom(entry.ownerKey, added, now);
    this.#replace(entry, result.task, "input_submitted");
    return result;
  }

  /**
   * Refuses `added` more payload bytes for an owner when its live tasks, recounted from
   * scratch, would then hold more than `maxBytesPerOwner`. Only new client payload
   * (arguments, answers) is refused; a run's outcome is always stored, and counted.
   */
  #assertBytesRoom(ownerKey: string, added: number, now: number): void {
    if (this.#maxBytesPerOwner === Number.POSITIVE_INFINITY) return;
    let held = 0;
    for (const e of this.#tasks.values()) {
      if (e.ownerKey === ownerKey && !isExpired(e.record, now)) held += taskPayloadBytes(e.record);
    }
    if (held + added > this.#maxBytesPerOwner) {
      throw taskErrors.storeFull("maxBytesPerOwner", this.#maxBytesPerOwner);
    }
  }

  async takeInputResponses(taskId: string, scope: OwnerScope): Promise<TakeInputResult> {
    const entry = this.#fenced(taskId, scope);
    const result = takeTaskInputResponses(entry.record);
    if (result.task !== entry.record) this.#replace(entry, result.task, "input_taken");
    return result;
  }

  async delete(taskId: string, scope: OwnerScope): Promise<void> {
    const entry = this.#find(taskId, scope);
    this.#tasks.delete(taskId);
    this.#changed(entry.record, "deleted");
  }

  async cleanupExpired(options: { limit?: number } = {}): Promise<number> {
    if (this.#closed) return 0;
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    const now = this.#clock.now();
    let removed = 0;
    for (const entry of [...this.#tasks.values()]) {
      if (removed >= limit) break;
      if (!isExpired(entry.record, now)) continue;
      this.#tasks.delete(entry.record.taskId);
      this.#changed(entry.record, "deleted");
      removed++;
    }
    return removed;
  }

  async claim(holder: string, options: ClaimOptions): Promise<TaskRecord[]> {
    this.#open();
    validateClaim(holder, options);
    const limit = claimLimit(options.limit);
    const now = this.#clock.now();
    const tools = options.toolNames === undefined ? null : new Set(options.toolNames);
    const claimed: TaskRecord[] = [];
    // Each pick: the owner with the fewest running tasks (this claim's included) that is
    // under its limit, ties to the oldest queued task; that owner's oldest task.
    for (;;) {
      if (claimed.length >= limit) break;
      let best: { entry: Entry; running: number } | undefined;
      for (const entry of this.#tasks.values()) {
        if (!isClaimable(entry.record, now)) continue;
        if (tools !== null && !tools.has(entry.record.request.toolName)) continue;
        const running = this.#running(entry.ownerKey, options);
        if (!underRunningLimit(running, options)) continue;
        if (best === undefined || running < best.running) best = { entry, running };
      }
      if (best === undefined) break;
      const next = claimTask(best.entry.record, holder, options.leaseMs, now);
      claimed.push(this.#replace(best.entry, next, "claimed"));
    }
    return claimed.sort((a, b) => this.#seqOf(a) - this.#seqOf(b));
  }

  /** An owner's running tasks as the limits count them. */
  #running(ownerKey: string, limits: OwnerLimits): number {
    let working = 0;
    let waiting = 0;
    for (const { record, ownerKey: key } of this.#tasks.values()) {
      if (key !== ownerKey || isTerminal(record.status) || record.execution.holder === null) {
        continue;
      }
      if (record.status === "input_required") waiting++;
      else working++;
    }
    return countedRunning(working, waiting, limits);
  }

  /** An owner's queued tasks (no holder yet). */
  #queuedOf(ownerKey: string): number {
    let queued = 0;
    for (const { record, ownerKey: key } of this.#tasks.values()) {
      if (key === ownerKey && !isTerminal(record.status) && record.execution.holder === null) {
        queued++;
      }
    }
    return queued;
  }

  #seqOf(record: TaskRecord): number {
    return this.#tasks.get(record.taskId)?.seq ?? 0;
  }

  async renewLease(taskId: string, scope: OwnerScope, leaseMs: number): Promise<boolean> {
    validateLeaseMs(leaseMs);
    const entry = this.#heldBy(taskId, scope);
    if (entry === null) return false;
    // Bookkeeping: no version change and no event.
    entry.record = renewTaskLease(entry.record, leaseMs, this.#clock.now());
    return true;
  }

  async releaseLease(taskId: string, scope: OwnerScope): Promise<boolean> {
    const entry = this.#heldBy(taskId, scope);
    if (entry === null) return false;
    this.#requeueOrEnd(entry, releaseTask(entry.record, this.#clock.now()));
    return true;
  }

  async requeue(
    taskId: string,
    scope: OwnerScope,
    statusMessage: string | null,
  ): Promise<TaskRecord> {
    const entry = this.#fenced(taskId, scope, "requeue");
    const retry = nextAttempt(entry.record.execution, { kind: "retry_requested", statusMessage });
    const next = requeueTask(entry.record, this.#clock.now(), retry);
    return this.#requeueOrEnd(entry, next);
  }

  async recoverOrphans(options: { limit?: number } = {}): Promise<OrphanSweep> {
    const failedTasks: TaskRecord[] = [];
    const cancelledTasks: TaskRecord[] = [];
    let requeued = 0;
    const sweep = () => orphanSweepOf(requeued, failedTasks, cancelledTasks);
    if (this.#closed) return sweep();
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    const now = this.#clock.now();
    for (const entry of this.#tasks.values()) {
      if (requeued + failedTasks.length + cancelledTasks.length >= limit) break;
      if (!isOrphaned(entry.record, now)) continue;
      const next = this.#requeueOrEnd(entry, recoverOrphan(entry.record, now));
      if (next.status === "failed") failedTasks.push(next);
      else if (next.status === "cancelled") cancelledTasks.push(next);
      else requeued++;
    }
    return sweep();
  }

  /** A task requeued (`queued`), or ended instead (a recorded cancel, no attempt left). */
  #requeueOrEnd(entry: Entry, next: TaskRecord): TaskRecord {
    return this.#replace(entry, next, isTerminal(next.status) ? "status_changed" : "queued");
  }

  watch(listener: TaskChangeListener, taskId?: string): Unsubscribe {
    return this.#feed.watch(listener, taskId);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#feed.clear();
  }

  #open(): void {
    if (this.#closed) throw taskErrors.storeUnavailable("the reference store was closed");
  }

  /** A task inside the scope and not expired, or `not_found_or_unauthorized`. */
  #find(taskId: string, scope: OwnerScope): Entry {
    this.#open();
    const entry = this.#tasks.get(taskId);
    if (
      entry === undefined ||
      !scopeAllowsKey(scope, entry.ownerKey) ||
      isExpired(entry.record, this.#clock.now())
    ) {
      throw taskErrors.notFound(taskId);
    }
    return entry;
  }

  /**
   * A task inside the scope that `intent` may start from (else `invalid_transition`) and,
   * when the scope carries a fence, held by the run it names (else `lease_lost`).
   */
  #fenced(taskId: string, scope: OwnerScope, intent?: Intent): Entry {
    const entry = this.#find(taskId, scope);
    if (intent !== undefined) assertIntentAllowed(entry.record, intent);
    assertFence(entry.record, scope.fence);
    return entry;
  }

  /** The task when the run named by `scope.fence` holds it; `null` otherwise. */
  #heldBy(taskId: string, scope: OwnerScope): Entry | null {
    this.#open();
    const fence = scope.fence;
    if (fence === undefined) return null;
    const entry = this.#tasks.get(taskId);
    if (entry === undefined || !scopeAllowsKey(scope, entry.ownerKey)) return null;
    const { holder, fencingToken } = entry.record.execution;
    const held = holder === fence.holder && fencingToken === fence.fencingToken;
    return held && !isTerminal(entry.record.status) ? entry : null;
  }

  #replace(entry: Entry, next: TaskRecord, kind: TaskChangeKind): TaskRecord {
    entry.record = next;
    this.#changed(next, kind);
    return next;
  }

  /**
   * Delivers the change synchronously once the write is done. A listener that writes to
   * the store from inside its callback only queues its own change, so every listener hears
   * the changes in commit order.
   */
  #changed(record: TaskRecord, kind: TaskChangeKind): void {
    this.#queue.push(changeOf(record, kind));
    if (this.#delivering) return;
    this.#delivering = true;
    try {
      for (let change = this.#queue.shift(); change; change = this.#queue.shift()) {
        this.#feed.emit(change);
      }
    } finally {
      this.#delivering = false;
    }
  }
}

/** A claim's limit as a count: below 1 (or not a number) claims nothing. */
function claimLimit(limit: number): number {
  return limit >= 1 ? Math.floor(limit) : 0;
}

/**
 * The same store as a plain `TaskStore`: only the `TaskStore` methods, so `supportsQueue`
 * is false, for tests of what core does with a store that is no task queue.
 */
export function plainTaskStore(store: TaskStore): TaskStore {
  return {
    create: (task, scope) => store.create(task, scope),
    get: (taskId, scope) => store.get(taskId, scope),
    list: (scope, query) => store.list(scope, query),
    listNewest: (scope, query) => store.listNewest(scope, query),
    listNewestAcrossOwners: (query) => store.listNewestAcrossOwners(query),
    getAcrossOwners: (taskId) => store.getAcrossOwners(taskId),
    complete: (taskId, scope, result, statusMessage) =>
      store.complete(taskId, scope, result, statusMessage),
    fail: (taskId, scope, error, statusMessage) => store.fail(taskId, scope, error, statusMessage),
    requireInput: (taskId, scope, requests, statusMessage) =>
      store.requireInput(taskId, scope, requests, statusMessage),
    setStatusMessage: (taskId, scope, statusMessage) =>
      store.setStatusMessage(taskId, scope, statusMessage),
    requestCancel: (taskId, scope) => store.requestCancel(taskId, scope),
    markCancelled: (taskId, scope, statusMessage) =>
      store.markCancelled(taskId, scope, statusMessage),
    submitInput: (taskId, scope, responses) => store.submitInput(taskId, scope, responses),
    takeInputResponses: (taskId, scope) => store.takeInputResponses(taskId, scope),
    delete: (taskId, scope) => store.delete(taskId, scope),
    cleanupExpired: (options) => store.cleanupExpired(options),
    watch: (listener, taskId) => store.watch(listener, taskId),
    close: () => store.close(),
  };
}
