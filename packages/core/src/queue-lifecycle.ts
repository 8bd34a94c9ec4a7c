/**
 * The queue's part of the lifecycle, as pure functions: fences, claims, lease renewal and
 * hand-back, requeues and orphan recovery. What follows a run that ended without an outcome
 * is the retry policy's to decide (`retry-policy.ts`); these functions apply it.
 */

import { taskErrors } from "./errors.js";
import { failTask, markTaskCancelled } from "./lifecycle.js";
import { copyExecution, copyRecord, EMPTY } from "./record-copy.js";
import {
  attemptsAfterRequeue,
  CANCELLED_WITHOUT_RUN_MESSAGE,
  nextAttempt,
  type Requeue,
} from "./retry-policy.js";
import type { Fence, TaskRecord } from "./task.js";
import { assertIntentAllowed, isTerminal } from "./transitions.js";

/**
 * Throws `lease_lost` unless `fence` names the run that holds the task. Stores call it (or
 * test the same in SQL) on every write that carries a fence, after the transition check.
 */
export function assertFence(task: TaskRecord, fence: Fence | undefined): void {
  if (fence === undefined) return;
  const { holder, fencingToken } = task.execution;
  if (holder !== fence.holder || fencingToken !== fence.fencingToken) {
    throw taskErrors.leaseLost(task.taskId);
  }
}

/** True when a worker may claim the task at `now`: running, queued and past its backoff. */
export function isClaimable(task: TaskRecord, now: number): boolean {
  const { holder, availableAt } = task.execution;
  return (
    !isTerminal(task.status) && holder === null && (availableAt === null || availableAt <= now)
  );
}

/** A worker claims a queued task: a new run, the next fencing token, a lease until then. */
export function claimTask(
  task: TaskRecord,
  holder: string,
  leaseMs: number,
  now: number,
): TaskRecord {
  const e = task.execution;
  const next = copyRecord(task);
  next.execution = copyExecution(e, {
    attempt: e.attempt + 1,
    holder,
    fencingToken: e.fencingToken + 1,
    leaseExpiresAt: now + leaseMs,
    availableAt: null,
  });
  return next;
}

/** The holder extends its lease; bookkeeping only (the version does not change). */
export function renewTaskLease(task: TaskRecord, leaseMs: number, now: number): TaskRecord {
  const next = copyRecord(task);
  next.version = task.version;
  next.execution = copyExecution(task.execution, { leaseExpiresAt: now + leaseMs });
  return next;
}

/** A stopping worker hands the task back: queued at once, the attempt not counted. */
export function releaseTask(task: TaskRecord, now: number): TaskRecord {
  return requeueTask(task, now, nextAttempt(task.execution, { kind: "handed_back" }));
}

/** True when `fence` names the run holding the task (the check of renew and release). */
export function holdsTask(task: TaskRecord, fence: Fence | undefined): boolean {
  return (
    fence !== undefined &&
    !isTerminal(task.status) &&
    task.execution.holder === fence.holder &&
    task.execution.fencingToken === fence.fencingToken
  );
}

/**
 * Back to the queue: the task stays running (`working`), no run holds it, the questions
 * of the abandoned run are dropped (their answers stay in `inputAnswers`). The attempts
 * are counted as the retry policy says ({@link attemptsAfterRequeue}).
 *
 * A task whose cancellation was requested is not queued again: it ends `cancelled` (see
 * {@link endCancelRequested}), since the run that would have acknowledged the request is
 * gone, and another attempt would only acknowledge it later.
 */
export function requeueTask(task: TaskRecord, now: number, requeue: Requeue): TaskRecord {
  assertIntentAllowed(task, "requeue");
  if (task.cancelRequestedAt !== null) return endCancelRequested(task, now);
  const e = task.execution;
  const next = copyRecord(task);
  next.status = "working";
  next.statusMessage = requeue.statusMessage;
  next.inputRequests = EMPTY;
  next.inputResponses = EMPTY;
  next.lastUpdatedAt = now;
  next.execution = copyExecution(e, {
    attempt: attemptsAfterRequeue(e.attempt, requeue),
    holder: null,
    leaseExpiresAt: null,
    availableAt: requeue.backoffMs > 0 ? now + requeue.backoffMs : null,
  });
  return next;
}

/** True when the task's lease ran out at `now` (its worker died or stalled). */
export function isOrphaned(task: TaskRecord, now: number): boolean {
  const { holder, leaseExpiresAt } = task.execution;
  return (
    !isTerminal(task.status) && holder !== null && leaseExpiresAt !== null && leaseExpiresAt <= now
  );
}

/**
 * A task whose cancellation was requested, and whose run ended without an outcome of its
 * own (its worker was lost, ran past the deadline, or handed it back): it ends `cancelled`.
 * A recorded request wins over another attempt and over "Worker lost".
 */
export function endCancelRequested(task: TaskRecord, now: number): TaskRecord {
  return markTaskCancelled(task, now, CANCELLED_WITHOUT_RUN_MESSAGE);
}

/**
 * An orphan (see {@link isOrphaned}) whose cancellation was requested ends `cancelled`;
 * any other goes where the retry policy sends a lost run ({@link nextAttempt}): back to
 * the queue while attempts remain, after its backoff, and otherwise failed with
 * `WORKER_LOST_ERROR`.
 */
export function recoverOrphan(task: TaskRecord, now: number): TaskRecord {
  if (task.cancelRequestedAt !== null) return endCancelRequested(task, now);
  const next = nextAttempt(task.execution, { kind: "lost" });
  return next.retry ? requeueTask(task, now, next) : failTask(task, now, next.error);
}
