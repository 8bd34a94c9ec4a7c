import type { OwnerLimits } from "./fairness.js";
import type { SubmitInputResult, TakeInputResult } from "./lifecycle.js";
import type { OwnerScope } from "./owner.js";
import type {
  Fence,
  InputRequest,
  InputResponse,
  JsonRpcErrorObject,
  NewTask,
  TaskRecord,
  TaskStatus,
} from "./task.js";

/** What to list. */
export interface ListQuery {
  /** Only tasks in one of these statuses; all statuses when absent or empty. */
  readonly statuses?: readonly TaskStatus[];
  /** A cursor from a previous page; the first page when absent. */
  readonly cursor?: string;
  /** The page size wanted; stores clamp it to their own maximum. */
  readonly limit: number;
}

/**
 * What to list newest first ({@link TaskStore.listNewest}): the page-by-page view of a
 * console, filtered by status and tool.
 */
export interface NewestQuery {
  /** Only tasks in one of these statuses; all statuses when absent or empty. */
  readonly statuses?: readonly TaskStatus[];
  /** Only tasks of one of these tools; all tools when absent or empty. */
  readonly toolNames?: readonly string[];
  /** A cursor from a previous page of the same listing; the newest tasks when absent. */
  readonly cursor?: string;
  /** The page size wanted; stores clamp it to their own maximum. */
  readonly limit: number;
}

/** One page of tasks, in the order of the listing that made it. */
export interface TaskPage {
  readonly tasks: readonly TaskRecord[];
  /** Present when more tasks may follow. */
  readonly nextCursor?: string;
}

/**
 * What happened to a task; watchers re-read the task for the details. `queued`: it became
 * claimable (created without a worker, requeued, handed back); `claimed`: a run took it.
 */
export type TaskChangeKind =
  | "created"
  | "status_changed"
  | "status_message"
  | "input_requested"
  | "input_submitted"
  | "input_taken"
  | "cancel_requested"
  | "queued"
  | "claimed"
  | "deleted";

/**
 * A change-feed event. It carries no payload and no owner, so delivering it anywhere leaks
 * nothing: a watcher that wants the task reads it again through its own owner scope.
 */
export interface TaskChange {
  readonly taskId: string;
  readonly kind: TaskChangeKind;
  readonly status: TaskStatus;
  readonly version: number;
}

/** A change-feed listener. It must not throw; errors are reported and otherwise ignored. */
export type TaskChangeListener = (change: TaskChange) => void;

/** Stops a subscription. Calling it twice is harmless. */
export type Unsubscribe = () => void;

/**
 * The storage contract every task store implements and `describeTaskStoreContract` checks.
 *
 * - Every call carries the caller's {@link OwnerScope}. A task outside the scope behaves
 *   exactly like a missing one: `not_found_or_unauthorized`.
 * - Each intent operation is atomic, a conditional write and never a read-modify-write
 *   that another writer could interleave with. Of concurrent terminal writes to one task,
 *   exactly one wins; the others get `invalid_transition`.
 * - `create` resolves only once `get` (on any node sharing the store) finds the task.
 * - Terminal tasks whose `expiresAt` has passed are gone for every call, swept or not.
 *   Running tasks never expire.
 * - Errors are {@link TaskError}s from the closed vocabulary; a store that cannot reach its
 *   backend throws `store_unavailable` rather than hanging.
 */
export interface TaskStore {
  /**
   * Stores a new `working` task owned by `scope.owner`: claimed by `task.lease.holder`
   * when a lease is given, else queued (stores that are no {@link TaskQueueStore} ignore
   * the lease).
   */
  create(task: NewTask, scope: OwnerScope): Promise<TaskRecord>;

  /** Reads one task. */
  get(taskId: string, scope: OwnerScope): Promise<TaskRecord>;

  /** Lists the scope's tasks in creation order, by keyset cursor. */
  list(scope: OwnerScope, query: ListQuery): Promise<TaskPage>;

  /**
   * Lists the scope's tasks newest first (reverse creation order), by keyset cursor,
   * filtered by status and tool. A cursor stays valid when tasks are created or deleted.
   */
  listNewest(scope: OwnerScope, query: NewestQuery): Promise<TaskPage>;

  /**
   * The operator's listing: every owner's tasks newest first, like {@link listNewest}.
   * It bypasses owner scoping on purpose; only operator tooling that authenticated an
   * operator calls it (through `TaskService.listNewestAcrossOwners`), never a request path
   * acting for an owner.
   */
  listNewestAcrossOwners(query: NewestQuery): Promise<TaskPage>;

  /**
   * The operator's read: one task whoever owns it (`not_found_or_unauthorized` only when
   * it is missing or expired). Bypasses owner scoping on purpose, like
   * {@link listNewestAcrossOwners}; act on the task afterwards as its owner.
   */
  getAcrossOwners(taskId: string): Promise<TaskRecord>;

  /** `working | input_required → completed`. */
  complete(
    taskId: string,
    scope: OwnerScope,
    result: Readonly<Record<string, unknown>>,
    statusMessage?: string | null,
  ): Promise<TaskRecord>;

  /** `working | input_required → failed`. */
  fail(
    taskId: string,
    scope: OwnerScope,
    error: JsonRpcErrorObject,
    statusMessage?: string | null,
  ): Promise<TaskRecord>;

  /** `working | input_required → input_required`, adding requests under fresh keys. */
  requireInput(
    taskId: string,
    scope: OwnerScope,
    requests: Readonly<Record<string, InputRequest>>,
    statusMessage?: string | null,
  ): Promise<TaskRecord>;

  /** Changes a running task's status message. */
  setStatusMessage(
    taskId: string,
    scope: OwnerScope,
    statusMessage: string | null,
  ): Promise<TaskRecord>;

  /** Records a cancellation request; idempotent, status unchanged, no-op when terminal. */
  requestCancel(taskId: string, scope: OwnerScope): Promise<TaskRecord>;

  /** `working | input_required → cancelled`: the acknowledgement of a cancellation. */
  markCancelled(
    taskId: string,
    scope: OwnerScope,
    statusMessage?: string | null,
  ): Promise<TaskRecord>;

  /** Applies input responses by key (see `submitTaskInput` for the rules). */
  submitInput(
    taskId: string,
    scope: OwnerScope,
    responses: Readonly<Record<string, InputResponse>>,
  ): Promise<SubmitInputResult>;

  /** Atomically hands over and clears the received input responses. */
  takeInputResponses(taskId: string, scope: OwnerScope): Promise<TakeInputResult>;

  /** Removes a task now, whatever its status. */
  delete(taskId: string, scope: OwnerScope): Promise<void>;

  /**
   * Removes terminal tasks whose retention ran out, at most `limit` of them (all when
   * absent), and returns how many it removed. Safe to run from several places at once.
   */
  cleanupExpired(options?: { limit?: number }): Promise<number>;

  /**
   * Subscribes to changes of one task, or of every task when `taskId` is absent. Events
   * for changes committed after the subscription started are delivered, including changes
   * made elsewhere (another node) when the store is shared.
   */
  watch(listener: TaskChangeListener, taskId?: string): Unsubscribe;

  /** Releases timers, connections and listeners. */
  close(): Promise<void>;
}

/**
 * What a worker asks {@link TaskQueueStore.claim} for. The per-owner limits
 * ({@link OwnerLimits}) hold across every node sharing the store: a claim takes nothing of
 * an owner at `maxRunningPerOwner`, however many claims run at once.
 */
export interface ClaimOptions extends OwnerLimits {
  /** Most tasks to claim (the worker's free capacity). */
  readonly limit: number;
  /** How long the new runs' leases last before their holder must renew them. */
  readonly leaseMs: number;
  /** Only tasks of these tools (the ones this worker can run); all when absent. */
  readonly toolNames?: readonly string[];
}

/** What one {@link TaskQueueStore.recoverOrphans} pass did. */
export interface OrphanSweep {
  /** Orphans put back in the queue for another attempt. */
  readonly requeued: number;
  /** Orphans failed with "Worker lost" (no attempt left); always `failedTasks.length`. */
  readonly failed: number;
  /**
   * The orphans this pass failed with "Worker lost" (no attempt left), as stored after the
   * write: terminal records with status `failed` and the worker-lost error as their outcome.
   * Lets a caller account for them like any other terminal write (metrics, logs), e.g. by
   * tool and duration. Empty when the pass failed none; requeued orphans are not listed.
   */
  readonly failedTasks: readonly TaskRecord[];
  /** Orphans whose cancellation was requested, ended `cancelled`; always `cancelledTasks.length`. */
  readonly cancelled: number;
  /**
   * The orphans this pass ended `cancelled` because a cancel request was recorded before
   * their worker was lost (a recorded request wins over another attempt and over "Worker
   * lost"), as stored after the write.
   */
  readonly cancelledTasks: readonly TaskRecord[];
}

/**
 * A store that is also the task queue, shared by every node (pg-boss style: the queue
 * entry *is* the task row, so the two can never disagree). A running task is queued or
 * claimed by one run (see {@link TaskExecution}); every write of a run carries its
 * {@link Fence} in `scope.fence`, and the store refuses, in the same conditional write,
 * the writes of a run that was superseded (`lease_lost`).
 */
export interface TaskQueueStore extends TaskStore {
  /**
   * Claims up to `limit` claimable tasks (running, queued, past their backoff) in one
   * atomic step: each gets the next fencing token, one more attempt, `holder` and a lease.
   * Two workers never claim the same task. Tasks with a cancel request are claimed too: the
   * worker acknowledges them without running.
   *
   * Fair across owners: each owner's tasks are taken oldest first, and the workers are
   * shared out one task at a time to the owner with the fewest running tasks (counted as
   * {@link OwnerLimits} says, with the tasks this claim already took), ties going to the
   * owner whose oldest queued task is oldest. So with no backlog it is creation order, and
   * one owner's backlog delays another owner's new task by at most one claim. Owners at
   * `maxRunningPerOwner` are skipped. Returned oldest first.
   */
  claim(holder: string, options: ClaimOptions): Promise<TaskRecord[]>;

  /**
   * Extends the lease of the run named by `scope.fence` to `leaseMs` from now. Resolves
   * `false` when that run no longer holds the task (superseded, requeued or ended): the
   * caller must stop working on it. Bookkeeping only: no version change, no event.
   */
  renewLease(taskId: string, scope: OwnerScope, leaseMs: number): Promise<boolean>;

  /**
   * The run named by `scope.fence` hands the task back to the queue at once (shutdown), its
   * attempt not counted, so another worker claims it without waiting for the lease to run
   * out. A task whose cancellation was requested ends `cancelled` instead. Resolves `false`
   * when that run no longer held it.
   */
  releaseLease(taskId: string, scope: OwnerScope): Promise<boolean>;

  /**
   * The run named by `scope.fence` gives up and asks for another attempt: back to the
   * queue after the task's backoff, the attempt counted, with `statusMessage`. The caller
   * checks that an attempt remains. A task whose cancellation was requested ends
   * `cancelled` instead (and is returned so).
   */
  requeue(taskId: string, scope: OwnerScope, statusMessage: string | null): Promise<TaskRecord>;

  /**
   * Recovers running tasks whose lease ran out (their worker died or stalled): `cancelled`
   * when a cancellation was requested, else back to the queue while attempts remain, else
   * failed "Worker lost". Safe on several nodes at once.
   */
  recoverOrphans(options?: { limit?: number }): Promise<OrphanSweep>;
}

/** One owner's usage as a store's quota counters hold it (or a recount finds it). */
export interface UsageCounts {
  /** Tasks stored, expired ones not yet removed included. */
  readonly tasks: number;
  /** Their payload bytes (core's `taskPayloadBytes`); 0 when the store counts none. */
  readonly bytes: number;
}

/** What a store's quota counters hold: the total and each owner's (by owner key). */
export interface UsageSnapshot {
  /** Tasks stored in all. */
  readonly tasks: number;
  /** Each owner that holds something, by `ownerKey`; owners holding nothing are left out. */
  readonly owners: Readonly<Record<string, UsageCounts>>;
}

/**
 * A store's quota counters next to the same numbers counted from its tasks one by one:
 * they must agree. The counters let a store check its quotas at a cost that does not grow
 * with the number of tasks; the recount is the slow truth they are checked against (see the
 * contract suite's `auditUsage` hook).
 */
export interface UsageAudit {
  readonly counters: UsageSnapshot;
  readonly recount: UsageSnapshot;
}

/** True when the store implements {@link TaskQueueStore}. */
export function supportsQueue(store: TaskStore): store is TaskQueueStore {
  const s = store as Partial<TaskQueueStore>;
  return (
    typeof s.claim === "function" &&
    typeof s.renewLease === "function" &&
    typeof s.releaseLease === "function" &&
    typeof s.requeue === "function" &&
    typeof s.recoverOrphans === "function"
  );
}
