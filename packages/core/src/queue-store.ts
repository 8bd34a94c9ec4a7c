/**
 * The queue extension of the store contract: a store that is also the task queue, shared
 * by every node (claims, leases, fences, requeues and orphan recovery).
 */

import type { OwnerLimits } from "./fairness.js";
import type { OwnerScope } from "./owner.js";
import type { TaskStore } from "./store.js";
import type { TaskRecord } from "./task.js";

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

/**
 * A {@link TaskQueueStore.recoverOrphans} pass's report, its counts taken from its lists so
 * that they always agree: every store builds its report here.
 */
export function orphanSweepOf(
  requeued: number,
  failedTasks: readonly TaskRecord[],
  cancelledTasks: readonly TaskRecord[],
): OrphanSweep {
  return {
    requeued,
    failed: failedTasks.length,
    failedTasks,
    cancelled: cancelledTasks.length,
    cancelledTasks,
  };
}

/** The sweep of a store that is no task queue: nothing recovered. */
export function noOrphans(): OrphanSweep {
  return orphanSweepOf(0, [], []);
}
