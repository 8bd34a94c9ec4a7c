import {
  type ClaimOptions,
  type InputRequest,
  type InputResponse,
  type JsonRpcErrorObject,
  type OrphanSweep,
  type SubmitInputResult,
  startJanitor,
  type TakeInputResult,
  type TaskChangeListener,
  type TaskPage,
  type TaskRecord,
  type Unsubscribe,
} from "@mcp-tasks/core";
import {
  completeTask,
  failTask,
  type ListQuery,
  markTaskCancelled,
  type NewestQuery,
  type NewTask,
  newTaskRecord,
  nextAttempt,
  type OwnerScope,
  orphanSweepOf,
  payloadBytes,
  releaseTask,
  renewTaskLease,
  requestTaskCancel,
  requeueTask,
  requireTaskInput,
  setTaskStatusMessage,
  submitTaskInput,
  type TaskQueueStore,
  takeTaskInputResponses,
  taskErrors,
  type UsageAudit,
  validateClaim,
  validateLeaseMs,
  validateNewTask,
} from "@mcp-tasks/core/store";
import { noteChange } from "./change-log.js";
import { claimFairly } from "./fair-claim.js";
import { trackLease } from "./lease-index.js";
import type { MemoryTaskStoreOptions } from "./options.js";
import { recoverExpiredLeases } from "./orphan-recovery.js";
import { trackQueue } from "./queue-tracking.js";
import { admitUnderOwnerLimits } from "./queue-use.js";
import { assertRoomForTask, auditUsage, chargeAnswers } from "./quotas.js";
import { finishRecord, replaceRecord, requeueOrEnd } from "./record-writes.js";
import { StoreState } from "./store-state.js";
import { listNewestFirst, listNewestOfEveryone, listOldestFirst } from "./task-listing.js";
import { assertOpen, fencedSlot, heldSlot, unexpiredSlot, visibleSlot } from "./task-lookup.js";
import { removeTask, sweepExpired } from "./task-removal.js";
import { insertSlot } from "./task-table.js";

/**
 * An in-process, bounded task store in the spirit of an ETS table: `get` is a hash lookup,
 * listing one owner's tasks costs O(page) through a per-owner index, and expiry costs
 * O(expired) through a min-heap, with no timer per task. It is also the task queue of the
 * process's workers: `claim` costs O(claimed · log n) through per-tool queues in creation
 * order (see `ToolQueue`), `recoverOrphans` O(orphans · log n) through a heap of lease
 * deadlines. Every operation runs to completion without yielding, so each is atomic.
 * Passes `describeTaskStoreContract` and `describeQueueStoreContract`.
 *
 * The class is the contract surface: each method checks its arguments and the task's
 * visibility, computes the next record with core's lifecycle functions (core owns the
 * transition rules), and hands it to the module of its concern (record writes, quotas,
 * listing, the fair claim, orphan recovery, removal), which all work on one `StoreState`.
 */
export class MemoryTaskStore implements TaskQueueStore {
  readonly #state: StoreState;
  readonly #stopSweeper: (() => Promise<void>) | undefined;

  constructor(options: MemoryTaskStoreOptions = {}) {
    this.#state = new StoreState(options);
    const sweepMs = this.#state.sweepIntervalMs;
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
    return this.#state.tasks.size;
  }

  /**
   * The quota counters (the task count, each owner's tasks and payload bytes, kept as tasks
   * come and go, so a quota check costs O(1)) next to the same numbers counted task by task.
   * Both include expired tasks not yet swept. O(n): for tests and audits.
   */
  async auditUsage(): Promise<UsageAudit> {
    return auditUsage(this.#state);
  }

  async create(task: NewTask, scope: OwnerScope): Promise<TaskRecord> {
    const state = this.#state;
    assertOpen(state);
    if (state.tasks.has(task.taskId)) throw taskErrors.alreadyExists(task.taskId);
    const key = scope.ownerKey;
    validateNewTask(task);
    const admitted = admitUnderOwnerLimits(state, task, key);
    const record = newTaskRecord(admitted, scope.owner, state.clock.now());
    const bytes = state.countBytes ? payloadBytes(record.request.arguments) : 0;
    const list = assertRoomForTask(state, key, bytes);
    const slot = insertSlot(state, record, key, bytes, list);
    trackQueue(state, slot, null);
    noteChange(state, record, "created");
    if (record.execution.holder === null) noteChange(state, record, "queued");
    return record;
  }

  async get(taskId: string, scope: OwnerScope): Promise<TaskRecord> {
    return visibleSlot(this.#state, taskId, scope).record;
  }

  async list(scope: OwnerScope, query: ListQuery): Promise<TaskPage> {
    assertOpen(this.#state);
    return listOldestFirst(this.#state, scope, query);
  }

  async listNewest(scope: OwnerScope, query: NewestQuery): Promise<TaskPage> {
    assertOpen(this.#state);
    return listNewestFirst(this.#state, scope, query);
  }

  async listNewestAcrossOwners(query: NewestQuery): Promise<TaskPage> {
    assertOpen(this.#state);
    return listNewestOfEveryone(this.#state, query);
  }

  async getAcrossOwners(taskId: string): Promise<TaskRecord> {
    return unexpiredSlot(this.#state, taskId).record;
  }

  async complete(
    taskId: string,
    scope: OwnerScope,
    result: Readonly<Record<string, unknown>>,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    const state = this.#state;
    const slot = fencedSlot(state, taskId, scope, "complete");
    const next = completeTask(slot.record, state.clock.now(), result, statusMessage);
    return finishRecord(state, slot, next);
  }

  async fail(
    taskId: string,
    scope: OwnerScope,
    error: JsonRpcErrorObject,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    const state = this.#state;
    const slot = fencedSlot(state, taskId, scope, "fail");
    return finishRecord(
      state,
      slot,
      failTask(slot.record, state.clock.now(), error, statusMessage),
    );
  }

  async markCancelled(
    taskId: string,
    scope: OwnerScope,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    const state = this.#state;
    const slot = fencedSlot(state, taskId, scope, "markCancelled");
    const next = markTaskCancelled(slot.record, state.clock.now(), statusMessage);
    return finishRecord(state, slot, next);
  }

  async requireInput(
    taskId: string,
    scope: OwnerScope,
    requests: Readonly<Record<string, InputRequest>>,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    const state = this.#state;
    const slot = fencedSlot(state, taskId, scope, "requireInput");
    const next = requireTaskInput(slot.record, state.clock.now(), requests, statusMessage);
    return replaceRecord(state, slot, next, "input_requested");
  }

  async setStatusMessage(
    taskId: string,
    scope: OwnerScope,
    statusMessage: string | null,
  ): Promise<TaskRecord> {
    const state = this.#state;
    const slot = fencedSlot(state, taskId, scope, "setStatusMessage");
    const next = setTaskStatusMessage(slot.record, state.clock.now(), statusMessage);
    return replaceRecord(state, slot, next, "status_message");
  }

  async requestCancel(taskId: string, scope: OwnerScope): Promise<TaskRecord> {
    const state = this.#state;
    const slot = visibleSlot(state, taskId, scope);
    const next = requestTaskCancel(slot.record, state.clock.now());
    return next === slot.record ? next : replaceRecord(state, slot, next, "cancel_requested");
  }

  async submitInput(
    taskId: string,
    scope: OwnerScope,
    responses: Readonly<Record<string, InputResponse>>,
  ): Promise<SubmitInputResult> {
    const state = this.#state;
    const slot = visibleSlot(state, taskId, scope);
    const result = submitTaskInput(slot.record, state.clock.now(), responses);
    if (result.acceptedKeys.length === 0) return result;
    chargeAnswers(state, slot, responses, result.acceptedKeys);
    replaceRecord(state, slot, result.task, "input_submitted");
    return result;
  }

  async takeInputResponses(taskId: string, scope: OwnerScope): Promise<TakeInputResult> {
    const state = this.#state;
    const slot = fencedSlot(state, taskId, scope);
    const result = takeTaskInputResponses(slot.record);
    if (result.task !== slot.record) replaceRecord(state, slot, result.task, "input_taken");
    return result;
  }

  async delete(taskId: string, scope: OwnerScope): Promise<void> {
    const state = this.#state;
    const slot = visibleSlot(state, taskId, scope);
    removeTask(state, slot);
    noteChange(state, slot.record, "deleted");
  }

  async cleanupExpired(options: { limit?: number } = {}): Promise<number> {
    if (this.#state.closed) return 0;
    return sweepExpired(this.#state, options.limit ?? Number.POSITIVE_INFINITY);
  }

  async claim(holder: string, options: ClaimOptions): Promise<TaskRecord[]> {
    assertOpen(this.#state);
    validateClaim(holder, options);
    return claimFairly(this.#state, holder, options);
  }

  async renewLease(taskId: string, scope: OwnerScope, leaseMs: number): Promise<boolean> {
    validateLeaseMs(leaseMs);
    const state = this.#state;
    const slot = heldSlot(state, taskId, scope);
    if (slot === null) return false;
    // Bookkeeping: no version change and no event. The lease heap keeps its earlier key
    // and is corrected when that key comes up, so a renewal costs O(1).
    slot.record = renewTaskLease(slot.record, leaseMs, state.clock.now());
    trackLease(state, slot, true);
    return true;
  }

  async releaseLease(taskId: string, scope: OwnerScope): Promise<boolean> {
    const state = this.#state;
    const slot = heldSlot(state, taskId, scope);
    if (slot === null) return false;
    requeueOrEnd(state, slot, releaseTask(slot.record, state.clock.now()));
    return true;
  }

  async requeue(
    taskId: string,
    scope: OwnerScope,
    statusMessage: string | null,
  ): Promise<TaskRecord> {
    const state = this.#state;
    const slot = fencedSlot(state, taskId, scope, "requeue");
    const retry = nextAttempt(slot.record.execution, { kind: "retry_requested", statusMessage });
    return requeueOrEnd(state, slot, requeueTask(slot.record, state.clock.now(), retry));
  }

  async recoverOrphans(options: { limit?: number } = {}): Promise<OrphanSweep> {
    if (this.#state.closed) return orphanSweepOf(0, [], []);
    return recoverExpiredLeases(this.#state, options.limit ?? Number.POSITIVE_INFINITY);
  }

  watch(listener: TaskChangeListener, taskId?: string): Unsubscribe {
    return this.#state.feed.watch(listener, taskId);
  }

  async close(): Promise<void> {
    this.#state.closed = true;
    await this.#stopSweeper?.();
    this.#state.feed.clear();
  }
}
