/**
 * A small, obviously correct in-memory `TaskStore` for core's own tests, built only from
 * core's pure lifecycle functions: a `Map` in creation order, linear scans, no indexes and
 * no performance work. Every method runs to completion without awaiting, so each operation
 * is atomic. `test/contract.test.ts` proves it passes `describeTaskStoreContract`, so the
 * service and runner tests that run over it run over a reference implementation.
 */
import {
  type Clock,
  type InputRequest,
  type InputResponse,
  type JsonRpcErrorObject,
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
  ChangeFeed,
  completeTask,
  decodeSequenceCursor,
  encodeCursor,
  failTask,
  isExpired,
  type ListQuery,
  markTaskCancelled,
  type NewTask,
  newTaskRecord,
  type OwnerScope,
  requestTaskCancel,
  requireTaskInput,
  scopeAllowsKey,
  setTaskStatusMessage,
  submitTaskInput,
  takeTaskInputResponses,
  taskErrors,
} from "../../src/store-api.js";

/** Settings of a {@link ReferenceTaskStore}; no bounds unless given. */
export interface ReferenceTaskStoreOptions {
  readonly clock?: Clock;
  readonly maxTasks?: number;
  readonly maxTasksPerOwner?: number;
  /** Largest page `list` returns; default 100. */
  readonly maxPageSize?: number;
}

interface Entry {
  record: TaskRecord;
  /** Creation order; the keyset position a cursor points after. */
  readonly seq: number;
  readonly ownerKey: string;
}

export class ReferenceTaskStore implements TaskStore {
  readonly #clock: Clock;
  readonly #maxTasks: number;
  readonly #maxTasksPerOwner: number;
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
    this.#maxPageSize = options.maxPageSize ?? 100;
  }

  async create(task: NewTask, scope: OwnerScope): Promise<TaskRecord> {
    this.#open();
    const now = this.#clock.now();
    const record = newTaskRecord(task, scope.owner, now);
    if (this.#tasks.has(record.taskId)) throw taskErrors.alreadyExists(record.taskId);
    // Expired tasks are gone for every call, so they do not count against the bounds.
    const live = [...this.#tasks.values()].filter((e) => !isExpired(e.record, now));
    if (live.length >= this.#maxTasks) throw taskErrors.storeFull("maxTasks", this.#maxTasks);
    if (live.filter((e) => e.ownerKey === scope.ownerKey).length >= this.#maxTasksPerOwner) {
      throw taskErrors.storeFull("maxTasksPerOwner", this.#maxTasksPerOwner);
    }
    this.#tasks.set(record.taskId, { record, seq: ++this.#seq, ownerKey: scope.ownerKey });
    this.#changed(record, "created");
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

  async complete(
    taskId: string,
    scope: OwnerScope,
    result: Readonly<Record<string, unknown>>,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    const entry = this.#find(taskId, scope);
    const next = completeTask(entry.record, this.#clock.now(), result, statusMessage);
    return this.#replace(entry, next, "status_changed");
  }

  async fail(
    taskId: string,
    scope: OwnerScope,
    error: JsonRpcErrorObject,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    const entry = this.#find(taskId, scope);
    const next = failTask(entry.record, this.#clock.now(), error, statusMessage);
    return this.#replace(entry, next, "status_changed");
  }

  async requireInput(
    taskId: string,
    scope: OwnerScope,
    requests: Readonly<Record<string, InputRequest>>,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    const entry = this.#find(taskId, scope);
    const next = requireTaskInput(entry.record, this.#clock.now(), requests, statusMessage);
    return this.#replace(entry, next, "input_requested");
  }

  async setStatusMessage(
    taskId: string,
    scope: OwnerScope,
    statusMessage: string | null,
  ): Promise<TaskRecord> {
    const entry = this.#find(taskId, scope);
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
    const entry = this.#find(taskId, scope);
    const next = markTaskCancelled(entry.record, this.#clock.now(), statusMessage);
    return this.#replace(entry, next, "status_changed");
  }

  async submitInput(
    taskId: string,
    scope: OwnerScope,
    responses: Readonly<Record<string, InputResponse>>,
  ): Promise<SubmitInputResult> {
    const entry = this.#find(taskId, scope);
    const result = submitTaskInput(entry.record, this.#clock.now(), responses);
    if (result.acceptedKeys.length > 0) this.#replace(entry, result.task, "input_submitted");
    return result;
  }

  async takeInputResponses(taskId: string, scope: OwnerScope): Promise<TakeInputResult> {
    const entry = this.#find(taskId, scope);
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
    const { taskId, status, version } = record;
    this.#queue.push({ taskId, kind, status, version });
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
