/**
 * The task state machine: which statuses follow which, and which intent operations may
 * start from which statuses. Stores turn these tables into their conditional writes.
 */

import { taskErrors } from "./errors.js";
import type { TaskRecord, TaskStatus } from "./task.js";

/**
 * The transition table. Terminal states are absorbing. `input_required` may go straight to
 * `completed` or `failed`: both specs allow it.
 */
export const TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = Object.freeze({
  working: Object.freeze(["input_required", "completed", "failed", "cancelled"] as const),
  input_required: Object.freeze(["working", "completed", "failed", "cancelled"] as const),
  completed: Object.freeze([] as const),
  failed: Object.freeze([] as const),
  cancelled: Object.freeze([] as const),
});

/** True when the table has an edge `from → to`. */
export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** True for `completed`, `failed` and `cancelled`. */
export function isTerminal(status: TaskStatus): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

/**
 * What every ending does to a task besides setting its status, outcome and message, one
 * name per effect. Core's lifecycle applies each one; a store that writes endings itself
 * (in SQL) keys its writes by this list, so an effect added here is a type error in that
 * store until it writes it too.
 * - `startRetention`: the retention clock starts (`expiresAt`, see `expiryOnTerminal`);
 * - `dropInputRequests`: outstanding questions go, since nothing can answer them any more;
 * - `releaseExecution`: no run holds the task and nothing queues it (holder, lease,
 *   availability).
 */
export const TERMINAL_EFFECTS = Object.freeze([
  "startRetention",
  "dropInputRequests",
  "releaseExecution",
] as const);

/** One of {@link TERMINAL_EFFECTS}. */
export type TerminalEffect = (typeof TERMINAL_EFFECTS)[number];

/** The statuses a running task can be in. */
export const ACTIVE_STATUSES: readonly TaskStatus[] = Object.freeze(["working", "input_required"]);

/**
 * The intent operations that change a task, and the statuses each may start from. A store
 * turns this into its conditional write (e.g. `WHERE status = ANY(...)`).
 */
export const INTENT_FROM = Object.freeze({
  complete: ACTIVE_STATUSES,
  fail: ACTIVE_STATUSES,
  requireInput: ACTIVE_STATUSES,
  setStatusMessage: ACTIVE_STATUSES,
  markCancelled: ACTIVE_STATUSES,
  requeue: ACTIVE_STATUSES,
});

/** The operation names used in `invalid_transition` messages. */
export type Intent = keyof typeof INTENT_FROM;

const VERB: Record<Intent, string> = {
  complete: "complete",
  fail: "fail",
  requireInput: "request input for",
  setStatusMessage: "set the status message of",
  markCancelled: "mark cancelled",
  requeue: "requeue",
};

/** Throws `invalid_transition` unless `intent` may start from the task's status. */
export function assertIntentAllowed(task: TaskRecord, intent: Intent): void {
  if (!INTENT_FROM[intent].includes(task.status)) {
    throw taskErrors.invalidTransition(task.taskId, task.status, VERB[intent]);
  }
}
