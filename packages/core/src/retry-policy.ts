/**
 * The retry policy: what happens to a task whose run ended without an outcome that finishes
 * it. Every place that ends a run that way asks {@link nextAttempt}: the runner (a handler
 * that threw, a run past its deadline), orphan recovery (a lost worker) and the stores
 * (a run handed back, a run asking for another attempt). So the attempt counting, the
 * backoff and the status messages are decided once, with the words defined here once.
 *
 * A recorded cancel request wins over all of this (see `endCancelRequested`): the callers
 * check it, since only they know whether a request was seen.
 */

import {
  INTERNAL_ERROR_CODE,
  type JsonRpcErrorObject,
  type TaskExecution,
  type TaskRecord,
} from "./task.js";
import { isTerminal } from "./transitions.js";

/** The status message of a task a stopping worker handed back to the queue. */
export const HANDED_BACK_MESSAGE = "Queued: handed back by a stopping worker";

/** Why a lost worker's task is retried, in {@link retryingMessage}. */
export const WORKER_LOST_REASON = "the worker was lost";

/** Why a task whose run ran past its deadline is retried, in {@link retryingMessage}. */
export const DEADLINE_EXCEEDED_REASON = "the deadline was exceeded";

/** The error a task fails with when its last run's worker was lost. */
export const WORKER_LOST_ERROR: JsonRpcErrorObject = Object.freeze({
  code: INTERNAL_ERROR_CODE,
  message: "Worker lost: the node running this task stopped renewing its lease",
});

/** The status message of a cancel-requested task that ended without its run's acknowledgement. */
export const CANCELLED_WITHOUT_RUN_MESSAGE =
  "The task was cancelled by request (its run ended before acknowledging it).";

/** The status message of a task waiting for its next attempt. */
export function retryingMessage(reason: string, nextAttempt: number, maxAttempts: number): string {
  return `Retrying after ${reason} (attempt ${nextAttempt} of ${maxAttempts})`;
}

/** Why a task whose handler threw `error` is retried, in {@link retryingMessage}. */
export function errorRetryReason(error: Pick<JsonRpcErrorObject, "message">): string {
  return `an error (${error.message})`;
}

/** The error a task fails with when its last run ran past its deadline of `deadlineMs`. */
export function deadlineExceededError(deadlineMs: number): JsonRpcErrorObject {
  return {
    code: INTERNAL_ERROR_CODE,
    message: `Deadline exceeded: a run may take at most ${deadlineMs} ms`,
  };
}

/**
 * How a run ended without an outcome of its own:
 * - `lost`: its worker stopped renewing the lease (died, stalled, lost the store);
 * - `failed`: its handler threw `error` (retried only when the policy's `retryOnError` says so);
 * - `expired`: it ran past the policy's `deadlineMs`;
 * - `handed_back`: a stopping worker gave it back (the attempt does not count);
 * - `retry_requested`: the run asked its store for another attempt (`TaskQueueStore.requeue`),
 *   having checked that one remains, with `statusMessage` saying why.
 */
export type RunEnding =
  | { readonly kind: "lost" }
  | { readonly kind: "failed"; readonly error: JsonRpcErrorObject }
  | { readonly kind: "expired" }
  | { readonly kind: "handed_back" }
  | { readonly kind: "retry_requested"; readonly statusMessage: string | null };

/** How a task goes back to the queue. */
export interface Requeue {
  /** Whether the run that ends counts as an attempt (a graceful hand-back does not). */
  readonly countAttempt: boolean;
  /** Wait before the next claim, in ms. */
  readonly backoffMs: number;
  readonly statusMessage: string | null;
}

/** The policy's decision: another attempt (queued as {@link Requeue} says), or failure. */
export type NextAttempt =
  | ({ readonly retry: true } & Requeue)
  | { readonly retry: false; readonly error: JsonRpcErrorObject };

/**
 * Decides what follows a run that ended as `ending`, under the task's `execution`
 * (its policy and the attempts counted so far): another attempt after the backoff while
 * attempts remain (and, for a handler's error, while the policy retries errors), else the
 * error the task fails with.
 */
export function nextAttempt(
  execution: TaskExecution,
  ending: Extract<RunEnding, { kind: "handed_back" | "retry_requested" }>,
): { readonly retry: true } & Requeue;
export function nextAttempt(execution: TaskExecution, ending: RunEnding): NextAttempt;
export function nextAttempt(execution: TaskExecution, ending: RunEnding): NextAttempt {
  const { attempt, maxAttempts, backoffMs } = execution;
  const attemptsLeft = attempt < maxAttempts;
  const retryAfter = (reason: string): NextAttempt => ({
    retry: true,
    countAttempt: true,
    backoffMs,
    statusMessage: retryingMessage(reason, attempt + 1, maxAttempts),
  });
  switch (ending.kind) {
    case "handed_back":
      return { retry: true, countAttempt: false, backoffMs: 0, statusMessage: HANDED_BACK_MESSAGE };
    case "retry_requested":
      return { retry: true, countAttempt: true, backoffMs, statusMessage: ending.statusMessage };
    case "lost":
      return attemptsLeft
        ? retryAfter(WORKER_LOST_REASON)
        : { retry: false, error: WORKER_LOST_ERROR };
    case "expired":
      return attemptsLeft
        ? retryAfter(DEADLINE_EXCEEDED_REASON)
        : { retry: false, error: deadlineExceededError(execution.deadlineMs ?? 0) };
    case "failed":
      return attemptsLeft && execution.retryOnError
        ? retryAfter(errorRetryReason(ending.error))
        : { retry: false, error: ending.error };
  }
}

/**
 * The attempts a requeued task has counted: a run that does not count (handed back) gives
 * its attempt back, so the next claim's run is numbered as this one was.
 */
export function attemptsAfterRequeue(attempt: number, requeue: Requeue): number {
  return requeue.countAttempt ? attempt : Math.max(0, attempt - 1);
}

/**
 * The wait before a task a run just wrote may be claimed again, when it went back to the
 * queue with a retry backoff: the task's `backoffMs`; `null` for a task that is claimed,
 * finished, or claimable at once.
 */
export function retryBackoffOf(task: Pick<TaskRecord, "status" | "execution">): number | null {
  const { holder, availableAt, backoffMs } = task.execution;
  return holder === null && availableAt !== null && !isTerminal(task.status) ? backoffMs : null;
}
