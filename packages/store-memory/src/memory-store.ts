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
  startJanitor,
  systemClock,
  type TakeInputResult,
  type TaskChange,
  type TaskChangeKind,
  type TaskChangeListener,
  type TaskPage,
  type TaskRecord,
  type TaskStatus,
  type Unsubscribe,
} from "@mcp-tasks/core";
import {
  assertFence,
  assertIntentAllowed,
  ChangeFeed,
  claimTask,
  completeTask,
  countedRunning,
  decodeSequenceCursor,
  encodeCursor,
  failTask,
  type Intent,
  isClaimable,
  isOrphaned,
  type ListQuery,
  markTaskCancelled,
  type NewestQuery,
  type NewTask,
  newTaskRecord,
  nextAttempt,
  type OwnerScope,
  outcomeBytes,
  payloadBytes,
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
  UNOWNED_KEY,
  type UsageAudit,
  type UsageCounts,
  underOwnerLimits,
  underRunningLimit,
  validateClaim,
  validateLeaseMs,
  validateNewTask,
} from "@mcp-tasks/core/store";
import { MinHeap } from "./heap.js";
import { FRESH, HeapEntry, LazyHeap, type QueueMark, ToolQueue } from "./queue.js";

/** Settings of a {@link MemoryTaskStore}. */
export interface MemoryTaskStoreOptions {
  /** Time source; default the system clock. */
  readonly clock?: Clock;
  /** Most tasks held at once (live and finished); default 100 000. */
  readonly maxTasks?: number;
  /**
   * Most tasks one owner may hold at once, finished ones included until their ttl ends;
   * default 10 000 (a client creating a task every second keeps 3 600 under a 1 h ttl).
   */
  readonly maxTasksPerOwner?: number;
  /**
   * Most payload bytes one owner's tasks may hold: arguments, results and errors, input
   * answers (UTF-8 of their JSON, core's `taskPayloadBytes`); default 64 MiB. New arguments
   * and answers past it are refused with `store_full`; a run's outcome is always kept, and
   * counted.
   */
  readonly maxBytesPerOwner?: number;
  /** Largest page `list` returns; default 100. */
  readonly maxPageSize?: number;
  /**
   * How often a background sweep removes expired tasks and recovers orphaned ones (see
   * `recoverOrphans`); default 60 000 ms, 0 for never (expired tasks are invisible either
   * way). The timer never keeps the process alive.
   */
  readonly sweepIntervalMs?: number;
}

/** One stored task plus the bookkeeping the indexes need. */
class Slot {
  record: TaskRecord;
  readonly seq: number;
  readonly ownerKey: string;
  /** The payload bytes it holds (see `taskPayloadBytes`), counted in its owner's list. */
  bytes = 0;
  deleted = false;
  /** Its place in the queue while it is queued (running, no holder). */
  queueMark: QueueMark<Slot> | null = null;
  /** Its place among the lease deadlines while it is held; the key may lag a renewal. */
  leaseEntry: HeapEntry<Slot> | null = null;

  constructor(record: TaskRecord, seq: number, key: string) {
    this.record = record;
    this.seq = seq;
    this.ownerKey = key;
  }
}

/** One owner's running tasks: queued (no holder), held and working, held and waiting for input. */
interface QueueUse {
  queued: number;
  working: number;
  waiting: number;
}

/** Where a task stands in the queue, for {@link QueueUse}; `null` when it is finished. */
function queueState(record: TaskRecord): keyof QueueUse | null {
  if (isTerminal(record.status)) return null;
  if (record.execution.holder === null) return "queued";
  return record.status === "input_required" ? "waiting" : "working";
}

/** One owner's tasks in creation order; deleted slots are skipped and compacted lazily. */
class OwnerList {
  slots: Slot[] = [];
  live = 0;
  /** The payload bytes of its slots not yet removed (expired but unswept ones included). */
  bytes = 0;

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
 * O(expired) through a min-heap, with no timer per task. It is also the task queue of the
 * process's workers: `claim` costs O(claimed · log n) through per-tool queues in creation
 * order (see `ToolQueue`), `recoverOrphans` O(orphans · log n) through a heap of lease
 * deadlines. Every operation runs to completion without yielding, so each is atomic.
 * Passes `describeTaskStoreContract` and `describeQueueStoreContract`.
 */
export class MemoryTaskStore implements TaskQueueStore {
  readonly #clock: Clock;
  readonly #maxTasks: number;
  readonly #maxTasksPerOwner: number;
  readonly #maxBytesPerOwner: number;
  readonly #countBytes: boolean;
  readonly #maxPageSize: number;
  readonly #tasks = new Map<string, Slot>();
  readonly #owners = new Map<string, OwnerList>();
  /** Every owner's tasks in creation order, for the operator's newest-first listing. */
  readonly #everyone = new OwnerList();
  readonly #expiry = new MinHeap<Slot>();
  /** Queued tasks claimable now, per owner key and tool, in creation order. */
  readonly #ready = new Map<string, Map<string, ToolQueue<Slot>>>();
  /** Each owner's running tasks by queue state, for fair claims (owners with none left out). */
  readonly #queueUse = new Map<string, QueueUse>();
  /** Queued tasks waiting out a backoff, keyed by `availableAt`. */
  readonly #delayed = new LazyHeap<Slot>();
  /** Held tasks keyed by lease deadline; a key may be earlier than a renewed deadline. */
  readonly #leases = new LazyHeap<Slot>();
  readonly #feed = new ChangeFeed();
  readonly #pending: TaskChange[] = [];
  readonly #stopSweeper: (() => Promise<void>) | undefined;
  #seq = 0;
  #closed = false;

  constructor(options: MemoryTaskStoreOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#maxTasks = options.maxTasks ?? 100_000;
    this.#maxTasksPerOwner = options.maxTasksPerOwner ?? 10_000;
    this.#maxBytesPerOwner = options.maxBytesPerOwner ?? 64 * 1024 * 1024;
    // Without a byte quota there is nothing to account (it cannot be set later).
    this.#countBytes = this.#maxBytesPerOwner !== Number.POSITIVE_INFINITY;
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

  /**
   * The quota counters (the task count, each owner's tasks and payload bytes, kept as tasks
   * come and go, so a quota check costs O(1)) next to the same numbers counted task by task.
   * Both include expired tasks not yet swept. O(n): for tests and audits.
   */
  async auditUsage(): Promise<UsageAudit> {
    const counted: Record<string, UsageCounts> = {};
    for (const [key, list] of this.#owners) {
      if (list.live > 0 || list.bytes !== 0) counted[key] = { tasks: list.live, bytes: list.bytes };
    }
    const recounted: Record<string, { tasks: number; bytes: number }> = {};
    for (const slot of this.#tasks.values()) {
      const entry = recounted[slot.ownerKey] ?? { tasks: 0, bytes: 0 };
      recounted[slot.ownerKey] = entry;
      entry.tasks += 1;
      if (this.#countBytes) entry.bytes += taskPayloadBytes(slot.record);
    }
    return {
      counters: { tasks: this.#tasks.size, owners: counted },
      recount: {
        tasks: Object.values(recounted).reduce((sum, o) => sum + o.tasks, 0),
        owners: recounted,
      },
    };
  }

  async create(task: NewTask, scope: OwnerScope): Promise<TaskRecord> {
    this.#open();
    if (this.#tasks.has(task.taskId)) throw taskErrors.alreadyExists(task.taskId);
    const key = scope.ownerKey;
    validateNewTask(task);
    const use = this.#queueUse.get(key);
    const fair = underOwnerLimits(
      task,
      countedRunning(use?.working ?? 0, use?.waiting ?? 0, task.ownerLimits ?? {}),
      use?.queued ?? 0,
    );
    const record = newTaskRecord(fair, scope.owner, this.#clock.now());
    const bytes = this.#countBytes ? payloadBytes(record.request.arguments) : 0;
    let list = this.#owners.get(key);
    if (
      this.#tasks.size >= this.#maxTasks ||
      (list?.live ?? 0) >= this.#maxTasksPerOwner ||
      (list?.bytes ?? 0) + bytes > this.#maxBytesPerOwner
    ) {
      // Expired tasks do not count: sweep them, then look again.
      this.#sweep(Number.POSITIVE_INFINITY);
      list = this.#owners.get(key);
      if (this.#tasks.size >= this.#maxTasks)
        throw taskErrors.storeFull("maxTasks", this.#maxTasks);
      if ((list?.live ?? 0) >= this.#maxTasksPerOwner) {
        throw taskErrors.storeFull("maxTasksPerOwner", this.#maxTasksPerOwner);
      }
      if ((list?.bytes ?? 0) + bytes > this.#maxBytesPerOwner) {
        throw taskErrors.storeFull("maxBytesPerOwner", this.#maxBytesPerOwner);
      }
    }
    const slot = new Slot(record, ++this.#seq, key);
    slot.bytes = bytes;
    this.#tasks.set(record.taskId, slot);
    if (!list) {
      list = new OwnerList();
      this.#owners.set(key, list);
    }
    list.slots.push(slot);
    list.live++;
    list.bytes += bytes;
    this.#everyone.slots.push(slot);
    this.#everyone.live++;
    this.#track(slot, null);
    this.#changed(record, "created");
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

  async listNewest(scope: OwnerScope, query: NewestQuery): Promise<TaskPage> {
    this.#open();
    const own = this.#owners.get(scope.ownerKey)?.slots ?? [];
    const unowned =
      scope.includeUnowned && scope.ownerKey !== UNOWNED_KEY
        ? (this.#owners.get(UNOWNED_KEY)?.slots ?? [])
        : [];
    return this.#newest(query, own, unowned);
  }

  async listNewestAcrossOwners(query: NewestQuery): Promise<TaskPage> {
    this.#open();
    return this.#newest(query, this.#everyone.slots, []);
  }

  async getAcrossOwners(taskId: string): Promise<TaskRecord> {
    this.#open();
    const slot = this.#tasks.get(taskId);
    const now = this.#clock.now();
    if (slot === undefined || (slot.record.expiresAt !== null && slot.record.expiresAt <= now)) {
      throw taskErrors.notFound(taskId);
    }
    return slot.record;
  }

  /** Walks two creation-ordered lists backwards from the cursor, merged by sequence. */
  #newest(query: NewestQuery, a: readonly Slot[], b: readonly Slot[]): TaskPage {
    const before =
      query.cursor === undefined ? Number.POSITIVE_INFINITY : decodeSequenceCursor(query.cursor);
    const limit = Math.max(1, Math.min(Math.floor(query.limit) || 1, this.#maxPageSize));
    const statuses = query.statuses && query.statuses.length > 0 ? new Set(query.statuses) : null;
    const tools = query.toolNames && query.toolNames.length > 0 ? new Set(query.toolNames) : null;
    const now = this.#clock.now();
    const out: TaskRecord[] = [];
    let i = lastBefore(a, before);
    let j = lastBefore(b, before);
    let lastSeq = before;
    while (i >= 0 || j >= 0) {
      const takeA = j < 0 || (i >= 0 && a[i]!.seq > b[j]!.seq);
      const slot = takeA ? a[i--]! : b[j--]!;
      if (slot.deleted) continue;
      const r = slot.record;
      if (r.expiresAt !== null && r.expiresAt <= now) continue;
      if (statuses !== null && !statuses.has(r.status)) continue;
      if (tools !== null && !tools.has(r.request.toolName)) continue;
      if (out.length === limit) return { tasks: out, nextCursor: encodeCursor(lastSeq) };
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
    const slot = this.#fenced(taskId, scope, "complete");
    return this.#finish(slot, completeTask(slot.record, this.#clock.now(), result, statusMessage));
  }

  async fail(
    taskId: string,
    scope: OwnerScope,
    error: JsonRpcErrorObject,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    const slot = this.#fenced(taskId, scope, "fail");
    return this.#finish(slot, failTask(slot.record, this.#clock.now(), error, statusMessage));
  }

  async markCancelled(
    taskId: string,
    scope: OwnerScope,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    const slot = this.#fenced(taskId, scope, "markCancelled");
    return this.#finish(slot, markTaskCancelled(slot.record, this.#clock.now(), statusMessage));
  }

  async requireInput(
    taskId: string,
    scope: OwnerScope,
    requests: Readonly<Record<string, InputRequest>>,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    const slot = this.#fenced(taskId, scope, "requireInput");
    const next = requireTaskInput(slot.record, this.#clock.now(), requests, statusMessage);
    return this.#replace(slot, next, "input_requested");
  }

  async setStatusMessage(
    taskId: string,
    scope: OwnerScope,
    statusMessage: string | null,
  ): Promise<TaskRecord> {
    const slot = this.#fenced(taskId, scope, "setStatusMessage");
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
    if (result.acceptedKeys.length === 0) return result;
    // The accepted answers are kept for the task's lifetime: they count against its owner.
    if (this.#countBytes) {
      let added = 0;
      for (const key of result.acceptedKeys) added += payloadBytes(responses[key]);
      this.#assertBytesRoom(slot.ownerKey, added);
      this.#addBytes(slot, added);
    }
    this.#replace(slot, result.task, "input_submitted");
    return result;
  }

  async takeInputResponses(taskId: string, scope: OwnerScope): Promise<TakeInputResult> {
    const slot = this.#fenced(taskId, scope);
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

  async claim(holder: string, options: ClaimOptions): Promise<TaskRecord[]> {
    this.#open();
    validateClaim(holder, options);
    const limit = options.limit >= 1 ? Math.floor(options.limit) : 0;
    const now = this.#clock.now();
    this.#promoteDue(now);
    const claimed: TaskRecord[] = [];
    if (limit === 0) return claimed;
    const tools = options.toolNames === undefined ? null : new Set(options.toolNames);
    // The owners with queued work of the wanted tools and room under their limit.
    const owners: { key: string; queues: ToolQueue<Slot>[]; running: number }[] = [];
    for (const [key, byTool] of this.#ready) {
      const queues: ToolQueue<Slot>[] = [];
      for (const [tool, queue] of byTool) {
        if (queue.peekSeq() === undefined) {
          // Only tasks that left without a claim (finished, deleted): forget the queue.
          if (queue.empty) this.#dropQueue(key, tool);
        } else if (tools === null || tools.has(tool)) {
          queues.push(queue);
        }
      }
      const running = this.#running(key, options);
      if (queues.length > 0 && underRunningLimit(running, options)) {
        owners.push({ key, queues, running });
      }
    }
    while (claimed.length < limit && owners.length > 0) {
      // The owner with the fewest running tasks, ties to the oldest queued task; its oldest
      // task (a k-way merge of its tools' queues by creation sequence).
      let pick = -1;
      let pickQueue: ToolQueue<Slot> | undefined;
      let pickSeq = Number.POSITIVE_INFINITY;
      let pickRunning = Number.POSITIVE_INFINITY;
      for (let i = 0; i < owners.length; i++) {
        const owner = owners[i]!;
        if (owner.running > pickRunning) continue;
        for (const queue of owner.queues) {
          const seq = queue.peekSeq();
          if (seq === undefined) continue;
          if (owner.running < pickRunning || seq < pickSeq) {
            pick = i;
            pickQueue = queue;
            pickSeq = seq;
            pickRunning = owner.running;
          }
        }
      }
      if (pickQueue === undefined) break;
      const owner = owners[pick]!;
      const slot = pickQueue.pop()!;
      if (pickQueue.empty) this.#dropQueue(owner.key, slot.record.request.toolName);
      if (!isClaimable(slot.record, now)) {
        // Only when the clock went back past its backoff: it waits again.
        this.#enqueue(slot, false);
        continue;
      }
      const next = claimTask(slot.record, holder, options.leaseMs, now);
      claimed.push(this.#replace(slot, next, "claimed"));
      owner.running = this.#running(owner.key, options);
      const live = owner.queues.filter((q) => q.peekSeq() !== undefined);
      if (live.length === 0 || !underRunningLimit(owner.running, options)) owners.splice(pick, 1);
      else owner.queues = live;
    }
    return claimed.sort((a, b) => this.#tasks.get(a.taskId)!.seq - this.#tasks.get(b.taskId)!.seq);
  }

  /** An owner's running tasks as the limits count them. */
  #running(key: string, limits: OwnerLimits): number {
    const use = this.#queueUse.get(key);
    return use === undefined ? 0 : countedRunning(use.working, use.waiting, limits);
  }

  async renewLease(taskId: string, scope: OwnerScope, leaseMs: number): Promise<boolean> {
    validateLeaseMs(leaseMs);
    const slot = this.#heldBy(taskId, scope);
    if (slot === null) return false;
    // Bookkeeping: no version change and no event. The lease heap keeps its earlier key
    // and is corrected when that key comes up, so a renewal costs O(1).
    slot.record = renewTaskLease(slot.record, leaseMs, this.#clock.now());
    this.#trackLease(slot, true);
    return true;
  }

  async releaseLease(taskId: string, scope: OwnerScope): Promise<boolean> {
    const slot = this.#heldBy(taskId, scope);
    if (slot === null) return false;
    this.#requeueOrEnd(slot, releaseTask(slot.record, this.#clock.now()));
    return true;
  }

  async requeue(
    taskId: string,
    scope: OwnerScope,
    statusMessage: string | null,
  ): Promise<TaskRecord> {
    const slot = this.#fenced(taskId, scope, "requeue");
    const retry = nextAttempt(slot.record.execution, { kind: "retry_requested", statusMessage });
    const next = requeueTask(slot.record, this.#clock.now(), retry);
    return this.#requeueOrEnd(slot, next);
  }

  async recoverOrphans(options: { limit?: number } = {}): Promise<OrphanSweep> {
    let requeued = 0;
    const failedTasks: TaskRecord[] = [];
    const cancelledTasks: TaskRecord[] = [];
    const sweep = () => ({
      requeued,
      failed: failedTasks.length,
      failedTasks,
      cancelled: cancelledTasks.length,
      cancelledTasks,
    });
    if (this.#closed) return sweep();
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    const now = this.#clock.now();
    while (requeued + failedTasks.length + cancelledTasks.length < limit) {
      const key = this.#leases.peekKey();
      if (key === undefined || key > now) break;
      const entry = this.#leases.pop()!;
      const slot = entry.item;
      const record = slot.record;
      if (!isOrphaned(record, now)) {
        // Renewed since the entry was pushed: it comes up again at the new deadline.
        this.#leases.push(record.execution.leaseExpiresAt!, entry);
        continue;
      }
      slot.leaseEntry = null;
      const next = this.#requeueOrEnd(slot, recoverOrphan(record, now));
      if (next.status === "failed") failedTasks.push(next);
      else if (next.status === "cancelled") cancelledTasks.push(next);
      else requeued++;
    }
    return sweep();
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

  /**
   * A task inside the scope that `intent` may start from (else `invalid_transition`) and,
   * when the scope carries a fence, held by the run it names (else `lease_lost`).
   */
  #fenced(taskId: string, scope: OwnerScope, intent?: Intent): Slot {
    const slot = this.#find(taskId, scope);
    if (intent !== undefined) assertIntentAllowed(slot.record, intent);
    assertFence(slot.record, scope.fence);
    return slot;
  }

  /** The task when the run named by `scope.fence` holds it; `null` otherwise. */
  #heldBy(taskId: string, scope: OwnerScope): Slot | null {
    this.#open();
    const fence = scope.fence;
    if (fence === undefined) return null;
    const slot = this.#tasks.get(taskId);
    if (slot === undefined || !scopeAllowsKey(scope, slot.ownerKey)) return null;
    const { status, execution } = slot.record;
    const held = execution.holder === fence.holder && execution.fencingToken === fence.fencingToken;
    return held && !isTerminal(status) ? slot : null;
  }

  #replace(slot: Slot, next: TaskRecord, kind: TaskChangeKind): TaskRecord {
    const prev = slot.record;
    slot.record = next;
    this.#track(slot, prev);
    this.#changed(next, kind);
    return next;
  }

  /** A task requeued (`queued`), or ended instead (a recorded cancel, no attempt left). */
  #requeueOrEnd(slot: Slot, next: TaskRecord): TaskRecord {
    return isTerminal(next.status) ? this.#finish(slot, next) : this.#replace(slot, next, "queued");
  }

  #finish(slot: Slot, next: TaskRecord): TaskRecord {
    const prev = slot.record;
    // A run's outcome is never refused by the byte quota (that would lose finished work),
    // but it counts against the owner from now on.
    if (this.#countBytes) this.#addBytes(slot, outcomeBytes(next.outcome));
    slot.record = next;
    this.#track(slot, prev);
    if (next.expiresAt !== null) this.#expiry.push(next.expiresAt, slot);
    this.#changed(next, "status_changed");
    return next;
  }

  /**
   * Keeps the queue and lease indexes exact after `slot.record` changed from `prev` (`null`
   * for a new task): a running task without a holder is queued (ready or, during its
   * backoff, delayed), a running task with one is in the lease heap, others in neither.
   */
  #track(slot: Slot, prev: TaskRecord | null): void {
    const next = slot.record;
    const was = prev === null ? null : queueState(prev);
    const now = queueState(next);
    if (was !== now) this.#countUse(slot.ownerKey, was, now);
    // Most writes (a status message, a cancel request, input) keep the execution state and
    // stay running: nothing to re-index, and the execution object is not even read (at
    // 100 000 tasks it is one more cache miss per write).
    if (
      prev !== null &&
      next.execution === prev.execution &&
      isTerminal(next.status) === isTerminal(prev.status)
    ) {
      return;
    }
    const running = !isTerminal(next.status);
    const queued = running && next.execution.holder === null;
    if (!queued) {
      this.#unqueue(slot);
    } else if (
      slot.queueMark === null ||
      prev === null ||
      prev.execution.availableAt !== next.execution.availableAt
    ) {
      this.#unqueue(slot);
      this.#enqueue(slot, prev === null);
    }
    const sameRun =
      prev !== null &&
      prev.execution.holder === next.execution.holder &&
      prev.execution.fencingToken === next.execution.fencingToken;
    this.#trackLease(slot, sameRun);
  }

  /** Keeps the lease heap exact for the slot; `sameRun` when the holder and token held. */
  #trackLease(slot: Slot, sameRun: boolean): void {
    const { status, execution } = slot.record;
    const deadline = execution.leaseExpiresAt;
    if (isTerminal(status) || execution.holder === null || deadline === null) {
      slot.leaseEntry?.kill();
      slot.leaseEntry = null;
      return;
    }
    const current = slot.leaseEntry;
    // A key earlier than the deadline is corrected lazily; a later one (a new run, or a
    // renewal that shortened the lease) needs a new entry so the orphan is not found late.
    if (current !== null && sameRun && current.key <= deadline) return;
    current?.kill();
    const entry = new HeapEntry(slot);
    slot.leaseEntry = entry;
    this.#leases.push(deadline, entry);
  }

  /** Moves one task of the owner from one queue state to another in {@link #queueUse}. */
  #countUse(key: string, from: keyof QueueUse | null, to: keyof QueueUse | null): void {
    let use = this.#queueUse.get(key);
    if (use === undefined) {
      use = { queued: 0, working: 0, waiting: 0 };
      this.#queueUse.set(key, use);
    }
    if (from !== null) use[from]--;
    if (to !== null) use[to]++;
    if (use.queued === 0 && use.working === 0 && use.waiting === 0) this.#queueUse.delete(key);
  }

  #toolQueue(slot: Slot): ToolQueue<Slot> {
    const toolName = slot.record.request.toolName;
    let byTool = this.#ready.get(slot.ownerKey);
    if (byTool === undefined) {
      byTool = new Map();
      this.#ready.set(slot.ownerKey, byTool);
    }
    let queue = byTool.get(toolName);
    if (queue === undefined) {
      queue = new ToolQueue<Slot>();
      byTool.set(toolName, queue);
    }
    return queue;
  }

  /** Forgets an owner's queue of one tool that holds nothing any more. */
  #dropQueue(key: string, toolName: string): void {
    const byTool = this.#ready.get(key);
    if (byTool === undefined) return;
    byTool.delete(toolName);
    if (byTool.size === 0) this.#ready.delete(key);
  }

  /**
   * Puts a queued slot in the queue: during a backoff in the delayed heap, else in its
   * tool's queue (at the end of the list when `created`, the youngest task of all).
   */
  #enqueue(slot: Slot, created: boolean): void {
    const at = slot.record.execution.availableAt;
    if (at !== null && at > this.#clock.now()) {
      const entry = new HeapEntry(slot);
      slot.queueMark = entry;
      this.#delayed.push(at, entry);
    } else if (created) {
      this.#toolQueue(slot).append(slot);
    } else {
      this.#toolQueue(slot).reenter(slot);
    }
  }

  /** Takes the slot out of the queue (lazily: its entry is skipped when reached). */
  #unqueue(slot: Slot): void {
    const mark = slot.queueMark;
    if (mark === null) return;
    slot.queueMark = null;
    if (mark === FRESH) {
      this.#ready.get(slot.ownerKey)?.get(slot.record.request.toolName)?.noteListDeath();
    } else mark.kill();
  }

  /** Moves queued tasks whose backoff ended into their tool's ready heap. */
  #promoteDue(now: number): void {
    for (;;) {
      const key = this.#delayed.peekKey();
      if (key === undefined || key > now) return;
      const entry = this.#delayed.pop()!;
      this.#toolQueue(entry.item).adopt(entry);
    }
  }

  /** Refuses `added` payload bytes for the owner past its quota (after sweeping expired tasks). */
  #assertBytesRoom(ownerKey: string, added: number): void {
    const held = () => this.#owners.get(ownerKey)?.bytes ?? 0;
    if (held() + added <= this.#maxBytesPerOwner) return;
    this.#sweep(Number.POSITIVE_INFINITY);
    if (held() + added > this.#maxBytesPerOwner) {
      throw taskErrors.storeFull("maxBytesPerOwner", this.#maxBytesPerOwner);
    }
  }

  #addBytes(slot: Slot, added: number): void {
    if (added === 0 || slot.deleted) return;
    slot.bytes += added;
    const list = this.#owners.get(slot.ownerKey);
    if (list) list.bytes += added;
  }

  #remove(slot: Slot): void {
    if (slot.deleted) return;
    slot.deleted = true;
    const state = queueState(slot.record);
    if (state !== null) this.#countUse(slot.ownerKey, state, null);
    this.#unqueue(slot);
    slot.leaseEntry?.kill();
    slot.leaseEntry = null;
    this.#tasks.delete(slot.record.taskId);
    this.#everyone.live--;
    this.#everyone.compactIfSparse();
    const list = this.#owners.get(slot.ownerKey);
    if (list) {
      list.live--;
      list.bytes -= slot.bytes;
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

/** Index of the last slot with `seq < before` in a creation-ordered list; -1 for none. */
function lastBefore(slots: readonly Slot[], before: number): number {
  let lo = 0;
  let hi = slots.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (slots[mid]!.seq < before) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}
