import {
  type Clock,
  type InputRequest,
  type InputResponse,
  type JsonRpcErrorObject,
  type SubmitInputResult,
  startJanitor,
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
} from "@mcp-tasks/core";
import {
  ChangeFeed,
  completeTask,
  decodeSequenceCursor,
  encodeCursor,
  failTask,
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
  UNOWNED_KEY,
} from "@mcp-tasks/core/store";
import { MinHeap } from "./heap.js";

/** Settings of a {@link MemoryTaskStore}. */
export interface MemoryTaskStoreOptions {
  /** Time source; default the system clock. */
  readonly clock?: Clock;
  /** Most tasks held at once (live and finished); default 100 000. */
  readonly maxTasks?: number;
  /** Most tasks one owner may hold at once; default 1 000. */
  readonly maxTasksPerOwner?: number;
  /** Largest page `list` returns; default 100. */
  readonly maxPageSize?: number;
  /**
   * How often a background sweep removes expired tasks; default 60 000 ms, 0 for never
   * (expired tasks are invisible either way). The timer never keeps the process alive.
   */
  readonly sweepIntervalMs?: number;
}

/** One stored task plus the bookkeeping the indexes need. */
class Slot {
  record: TaskRecord;
  readonly seq: number;
  readonly ownerKey: string;
  deleted = false;

  constructor(record: TaskRecord, seq: number, key: string) {
    this.record = record;
    this.seq = seq;
    this.ownerKey = key;
  }
}

/** One owner's tasks in creation order; deleted slots are skipped and compacted lazily. */
class OwnerList {
  slots: Slot[] = [];
  live = 0;

  /** Index of the first slot with `seq > after`. */
  firstAfter(after: number): number {
    const slots = this.slots;
    let lo = 0;
    let hi = slots.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (slots[mid]!.seq <= after) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  compactIfSparse(): void {
    const dead = this.slots.length - this.live;
    if (dead > 32 && dead > this.live) this.slots = this.slots.filter((s) => !s.deleted);
  }
}

/**
 * An in-process, bounded task store in the spirit of an ETS table: `get` is a hash lookup,
 * listing one owner's tasks costs O(page) through a per-owner index, and expiry costs
 * O(expired) through a min-heap, with no timer per task. Every operation runs to completion
 * without yielding, so each is atomic. Passes `describeTaskStoreContract`.
 */
export class MemoryTaskStore implements TaskStore {
  readonly #clock: Clock;
  readonly #maxTasks: number;
  readonly #maxTasksPerOwner: number;
  readonly #maxPageSize: number;
  readonly #tasks = new Map<string, Slot>();
  readonly #owners = new Map<string, OwnerList>();
  readonly #expiry = new MinHeap<Slot>();
  readonly #feed = new ChangeFeed();
  readonly #pending: TaskChange[] = [];
  readonly #stopSweeper: (() => Promise<void>) | undefined;
  #seq = 0;
  #closed = false;

  constructor(options: MemoryTaskStoreOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#maxTasks = options.maxTasks ?? 100_000;
    this.#maxTasksPerOwner = options.maxTasksPerOwner ?? 1_000;
    this.#maxPageSize = options.maxPageSize ?? 100;
    const sweepMs = options.sweepIntervalMs ?? 60_000;
    if (sweepMs > 0) {
      // Core's janitor, so there is one sweeper design for every store; a pass costs
      // O(expired) here, so it takes them all.
      this.#stopSweeper = startJanitor(this, {
        intervalMs: sweepMs,
        batch: Number.POSITIVE_INFINITY,
      });
    }
  }

  /** Tasks held, including finished ones not yet swept. */
  get size(): number {
    return this.#tasks.size;
  }

  async create(task: NewTask, scope: OwnerScope): Promise<TaskRecord> {
    this.#open();
    if (this.#tasks.has(task.taskId)) throw taskErrors.alreadyExists(task.taskId);
    const key = scope.ownerKey;
    const record = newTaskRecord(task, scope.owner, this.#clock.now());
    let list = this.#owners.get(key);
    if (this.#tasks.size >= this.#maxTasks || (list?.live ?? 0) >= this.#maxTasksPerOwner) {
      this.#sweep(Number.POSITIVE_INFINITY);
      list = this.#owners.get(key);
      if (this.#tasks.size >= this.#maxTasks)
        throw taskErrors.storeFull("maxTasks", this.#maxTasks);
      if ((list?.live ?? 0) >= this.#maxTasksPerOwner) {
        throw taskErrors.storeFull("maxTasksPerOwner", this.#maxTasksPerOwner);
      }
    }
    const slot = new Slot(record, ++this.#seq, key);
    this.#tasks.set(record.taskId, slot);
    if (!list) {
      list = new OwnerList();
      this.#owners.set(key, list);
    }
    list.slots.push(slot);
    list.live++;
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
    const own = this.#owners.get(scope.ownerKey);
    const unowned =
      scope.includeUnowned && scope.ownerKey !== UNOWNED_KEY
        ? this.#owners.get(UNOWNED_KEY)
        : undefined;
    const now = this.#clock.now();
    const out: TaskRecord[] = [];
    // Merge the caller's list with the unowned list by creation sequence.
    const a = own?.slots ?? [];
    const b = unowned?.slots ?? [];
    let i = own ? own.firstAfter(after) : 0;
    let j = unowned ? unowned.firstAfter(after) : 0;
    let lastSeq = after;
    while (i < a.length || j < b.length) {
      const takeA = j >= b.length || (i < a.length && a[i]!.seq < b[j]!.seq);
      const slot = takeA ? a[i++]! : b[j++]!;
      if (slot.deleted) continue;
      const r = slot.record;
      if (r.expiresAt !== null && r.expiresAt <= now) continue;
      if (wanted !== null && !wanted.has(r.status)) continue;
      if (out.length === limit) {
        // One more match exists: hand out a cursor at the last returned task.
        return { tasks: out, nextCursor: encodeCursor(lastSeq) };
      }
      out.push(r);
      lastSeq = slot.seq;
    }
    return { tasks: out };
  }

  async complete(
    taskId: string,
    scope: OwnerScope,
    result: Readonly<Record<string, unknown>>,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    const slot = this.#find(taskId, scope);
    return this.#finish(slot, completeTask(slot.record, this.#clock.now(), result, statusMessage));
  }

  async fail(
    taskId: string,
    scope: OwnerScope,
    error: JsonRpcErrorObject,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    const slot = this.#find(taskId, scope);
    return this.#finish(slot, failTask(slot.record, this.#clock.now(), error, statusMessage));
  }

  async markCancelled(
    taskId: string,
    scope: OwnerScope,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    const slot = this.#find(taskId, scope);
    return this.#finish(slot, markTaskCancelled(slot.record, this.#clock.now(), statusMessage));
  }

  async requireInput(
    taskId: string,
    scope: OwnerScope,
    requests: Readonly<Record<string, InputRequest>>,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    const slot = this.#find(taskId, scope);
    const next = requireTaskInput(slot.record, this.#clock.now(), requests, statusMessage);
    return this.#replace(slot, next, "input_requested");
  }

  async setStatusMessage(
    taskId: string,
    scope: OwnerScope,
    statusMessage: string | null,
  ): Promise<TaskRecord> {
    const slot = this.#find(taskId, scope);
    const next = setTaskStatusMessage(slot.record, this.#clock.now(), statusMessage);
    return this.#replace(slot, next, "status_message");
  }

  async requestCancel(taskId: string, scope: OwnerScope): Promise<TaskRecord> {
    const slot = this.#find(taskId, scope);
    const next = requestTaskCancel(slot.record, this.#clock.now());
    return next === slot.record ? next : this.#replace(slot, next, "cancel_requested");
  }

  async submitInput(
    taskId: string,
    scope: OwnerScope,
    responses: Readonly<Record<string, InputResponse>>,
  ): Promise<SubmitInputResult> {
    const slot = this.#find(taskId, scope);
    const result = submitTaskInput(slot.record, this.#clock.now(), responses);
    if (result.acceptedKeys.length > 0) this.#replace(slot, result.task, "input_submitted");
    return result;
  }

  async takeInputResponses(taskId: string, scope: OwnerScope): Promise<TakeInputResult> {
    const slot = this.#find(taskId, scope);
    const result = takeTaskInputResponses(slot.record);
    if (result.task !== slot.record) this.#replace(slot, result.task, "input_taken");
    return result;
  }

  async delete(taskId: string, scope: OwnerScope): Promise<void> {
    const slot = this.#find(taskId, scope);
    this.#remove(slot);
    this.#changed(slot.record, "deleted");
  }

  async cleanupExpired(options: { limit?: number } = {}): Promise<number> {
    if (this.#closed) return 0;
    return this.#sweep(options.limit ?? Number.POSITIVE_INFINITY);
  }

  watch(listener: TaskChangeListener, taskId?: string): Unsubscribe {
    return this.#feed.watch(listener, taskId);
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#stopSweeper?.();
    this.#feed.clear();
  }

  #open(): void {
    if (this.#closed) throw taskErrors.storeUnavailable("the memory store was closed");
  }

  /** The slot of a visible, unexpired task, or `not_found_or_unauthorized`. */
  #find(taskId: string, scope: OwnerScope): Slot {
    this.#open();
    const slot = this.#tasks.get(taskId);
    if (
      slot === undefined ||
      !scopeAllowsKey(scope, slot.ownerKey) ||
      (slot.record.expiresAt !== null && slot.record.expiresAt <= this.#clock.now())
    ) {
      throw taskErrors.notFound(taskId);
    }
    return slot;
  }

  #replace(slot: Slot, next: TaskRecord, kind: TaskChangeKind): TaskRecord {
    slot.record = next;
    this.#changed(next, kind);
    return next;
  }

  #finish(slot: Slot, next: TaskRecord): TaskRecord {
    slot.record = next;
    if (next.expiresAt !== null) this.#expiry.push(next.expiresAt, slot);
    this.#changed(next, "status_changed");
    return next;
  }

  #remove(slot: Slot): void {
    if (slot.deleted) return;
    slot.deleted = true;
    this.#tasks.delete(slot.record.taskId);
    const list = this.#owners.get(slot.ownerKey);
    if (list) {
      list.live--;
      if (list.live === 0) this.#owners.delete(slot.ownerKey);
      else list.compactIfSparse();
    }
  }

  #sweep(limit: number): number {
    const now = this.#clock.now();
    let removed = 0;
    while (removed < limit) {
      const key = this.#expiry.peekKey();
      if (key === undefined || key > now) break;
      const slot = this.#expiry.pop()!;
      if (slot.deleted) continue;
      this.#remove(slot);
      this.#changed(slot.record, "deleted");
      removed++;
    }
    return removed;
  }

  #changed(record: TaskRecord, kind: TaskChangeKind): void {
    if (!this.#feed.hasListeners(record.taskId)) return;
    // Delivered after the current operation returns, in commit order, so a listener that
    // calls back into the store never interleaves with the write that woke it.
    this.#pending.push({
      taskId: record.taskId,
      kind,
      status: record.status,
      version: record.version,
    });
    if (this.#pending.length === 1) queueMicrotask(() => this.#flush());
  }

  #flush(): void {
    const batch = this.#pending.splice(0);
    for (const change of batch) this.#feed.emit(change);
  }
}
