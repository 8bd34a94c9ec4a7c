/**
 * Fair sharing of the workers between owners: the per-owner limits a claim applies, how a
 * store counts an owner's running tasks against them, and what a queued task says about
 * why it waits. Pure: every store computes the same numbers from its own indexes.
 */

import { taskErrors } from "./errors.js";
import type { NewTask } from "./task.js";

/**
 * Per-owner limits of the queue, applied across every node that shares the store (see
 * `ClaimOptions` and `NewTask.ownerLimits`). Absent limits do not apply.
 */
export interface OwnerLimits {
  /**
   * Most tasks one owner may have running (claimed by a worker) at once. A claim takes
   * nothing of an owner at this limit, and a task created to run at once is created queued
   * instead. Tasks waiting for input count only beyond {@link maxWaitingPerOwner}.
   */
  readonly maxRunningPerOwner?: number;
  /**
   * Of one owner's claimed tasks that wait for input (`input_required`), this many do not
   * count as running: a task parked on a question holds no worker. The ones beyond it
   * count against {@link maxRunningPerOwner}. Absent: waiting tasks never count.
   */
  readonly maxWaitingPerOwner?: number;
}

/** Status message of a task created queued because its owner runs as many tasks as it may. */
export const QUEUED_OWNER_LIMIT_MESSAGE = "Queued: owner limit reached";

/** Most queued tasks a store counts for {@link queuedAheadMessage}; more read as "100+". */
export const QUEUE_AHEAD_COUNT_LIMIT = 100;

/**
 * Status message of a task created queued while its owner is under its limits: how many of
 * the owner's own queued tasks are ahead of it. Claims take each owner's tasks oldest first
 * and share the workers between owners, so other owners' backlogs are not ahead of it.
 * Counts of {@link QUEUE_AHEAD_COUNT_LIMIT} or more read "100+": stores count no further,
 * so a create costs the same however long the owner's queue is.
 */
export function queuedAheadMessage(ahead: number): string {
  return ahead >= QUEUE_AHEAD_COUNT_LIMIT
    ? `Queued: ${QUEUE_AHEAD_COUNT_LIMIT}+ ahead of you`
    : `Queued: ${ahead} ahead of you`;
}

/**
 * The running tasks of an owner as {@link OwnerLimits.maxRunningPerOwner} counts them: its
 * claimed tasks that are `working`, plus those waiting for input beyond
 * {@link OwnerLimits.maxWaitingPerOwner}.
 */
export function countedRunning(working: number, waiting: number, limits: OwnerLimits): number {
  const free = limits.maxWaitingPerOwner ?? Number.POSITIVE_INFINITY;
  return working + Math.max(0, waiting - free);
}

/** True when an owner with this many counted running tasks may start one more. */
export function underRunningLimit(running: number, limits: OwnerLimits): boolean {
  return limits.maxRunningPerOwner === undefined || running < limits.maxRunningPerOwner;
}

/** Checks limits given by a caller: each a non-negative safe integer when present. */
export function validateOwnerLimits(limits: OwnerLimits | undefined): void {
  if (limits === undefined) return;
  for (const name of ["maxRunningPerOwner", "maxWaitingPerOwner"] as const) {
    const value = limits[name];
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0)) {
      throw taskErrors.invalidTask(`${name} must be a non-negative integer`);
    }
  }
}

/**
 * A new task as a store writes it under its `ownerLimits` (see `NewTask.ownerLimits`),
 * given its owner's counted running tasks and queued tasks (counted up to
 * {@link QUEUE_AHEAD_COUNT_LIMIT}): without its lease when the owner is at its running
 * limit, and, created queued with no status message, saying why it waits. Unchanged
 * without `ownerLimits`.
 */
export function underOwnerLimits(task: NewTask, running: number, queuedAhead: number): NewTask {
  const limits = task.ownerLimits;
  if (limits === undefined) return task;
  const atLimit = !underRunningLimit(running, limits);
  const lease = atLimit ? undefined : task.lease;
  if (lease !== undefined) return task;
  const { lease: _dropped, ...queued } = task;
  if (task.statusMessage !== undefined) return queued;
  return {
    ...queued,
    statusMessage: atLimit ? QUEUED_OWNER_LIMIT_MESSAGE : queuedAheadMessage(queuedAhead),
  };
}
