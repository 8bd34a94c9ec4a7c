/**
 * The lifecycle of a running task as pure functions: each takes a record and returns the
 * changed one (or throws the error a store must throw). Stores use them, or reproduce
 * them in their conditional writes. The queue's part (claims, leases, requeues, orphans)
 * is in `queue-lifecycle.ts`, the tables in `transitions.ts`.
 */

import { taskErrors } from "./errors.js";
import { copyRecord, EMPTY, type Mutable, releasedExecution } from "./record-copy.js";
import { assertStorable } from "./storable.js";
import type {
  InputRequest,
  InputResponse,
  JsonRpcErrorObject,
  TaskRecord,
  TaskStatus,
} from "./task.js";
import {
  assertIntentAllowed,
  isTerminal,
  TERMINAL_EFFECTS,
  type TerminalEffect,
} from "./transitions.js";

/** When a task reaching a terminal state at `now` may be removed. */
export function expiryOnTerminal(task: TaskRecord, now: number): number | null {
  if (task.ttlMs === null) return null;
  return (task.ttlAnchor === "creation" ? task.createdAt : now) + task.ttlMs;
}

/** How core applies each terminal effect to the ending task's copy. */
const APPLY_TERMINAL: Readonly<
  Record<TerminalEffect, (next: Mutable<TaskRecord>, task: TaskRecord, now: number) => void>
> = {
  startRetention: (next, task, now) => {
    next.expiresAt = expiryOnTerminal(task, now);
  },
  dropInputRequests: (next) => {
    next.inputRequests = EMPTY;
  },
  releaseExecution: (next, task) => {
    next.execution = releasedExecution(task.execution);
  },
};

function terminal(
  task: TaskRecord,
  now: number,
  status: TaskStatus,
  outcome: TaskRecord["outcome"],
  statusMessage: string | null,
): Mutable<TaskRecord> {
  const next = copyRecord(task);
  next.status = status;
  next.outcome = outcome;
  next.statusMessage = statusMessage;
  next.lastUpdatedAt = now;
  for (const effect of TERMINAL_EFFECTS) APPLY_TERMINAL[effect](next, task, now);
  return next;
}

/** `working | input_required → completed` with the tool's result (which may be `isError`). */
export function completeTask(
  task: TaskRecord,
  now: number,
  result: Readonly<Record<string, unknown>>,
  statusMessage: string | null | undefined = null,
): TaskRecord {
  assertStorable("the result", result);
  assertStorable("the status message", statusMessage);
  assertIntentAllowed(task, "complete");
  return terminal(task, now, "completed", { kind: "result", result }, statusMessage ?? null);
}

/** `working | input_required → failed` with a JSON-RPC error. */
export function failTask(
  task: TaskRecord,
  now: number,
  error: JsonRpcErrorObject,
  statusMessage: string | null | undefined = error.message,
): TaskRecord {
  assertStorable("the error", error);
  assertStorable("the status message", statusMessage);
  assertIntentAllowed(task, "fail");
  return terminal(task, now, "failed", { kind: "error", error }, statusMessage ?? null);
}

/**
 * `working | input_required → cancelled`: the worker acknowledges a cancellation, or an
 * immediate cancel happens. Sets `cancelRequestedAt` too when no request came first.
 */
export function markTaskCancelled(
  task: TaskRecord,
  now: number,
  statusMessage: string | null | undefined = "The task was cancelled by request.",
): TaskRecord {
  assertStorable("the status message", statusMessage);
  assertIntentAllowed(task, "markCancelled");
  const next = terminal(task, now, "cancelled", null, statusMessage ?? null);
  // Cancelling implies the request: an immediate cancel records both in one write.
  if (next.cancelRequestedAt === null)
    (next as { cancelRequestedAt: number }).cancelRequestedAt = now;
  return next;
}

/** Checks the keys of a new batch of input requests against the task's lifetime ledger. */
export function assertFreshInputKeys(
  task: TaskRecord,
  requests: Readonly<Record<string, InputRequest>>,
): void {
  const keys = Object.keys(requests);
  if (keys.length === 0) throw taskErrors.invalidTask("requireInput needs at least one request");
  assertStorable("the input requests", requests);
  for (const key of keys) {
    const request = requests[key];
    if (key.length === 0 || key.length > 256) {
      throw taskErrors.invalidTask("input keys must be 1 to 256 characters");
    }
    if (typeof request?.method !== "string" || request.method.length === 0) {
      throw taskErrors.invalidTask(`input request '${key}' needs a method`);
    }
    if (
      Object.hasOwn(task.inputRequests, key) ||
      Object.hasOwn(task.inputResponses, key) ||
      task.answeredInputKeys.includes(key)
    ) {
      throw taskErrors.invalidTask(`input key '${key}' was already used by task ${task.taskId}`);
    }
  }
}

/** `working | input_required → input_required`, adding requests under fresh keys. */
export function requireTaskInput(
  task: TaskRecord,
  now: number,
  requests: Readonly<Record<string, InputRequest>>,
  statusMessage?: string | null,
): TaskRecord {
  assertStorable("the input requests", requests);
  assertStorable("the status message", statusMessage);
  assertIntentAllowed(task, "requireInput");
  assertFreshInputKeys(task, requests);
  const next = copyRecord(task);
  next.status = "input_required";
  if (statusMessage !== undefined) next.statusMessage = statusMessage;
  next.inputRequests = { ...task.inputRequests, ...requests };
  next.lastUpdatedAt = now;
  return next;
}

/** Changes the status message of a running task. */
export function setTaskStatusMessage(
  task: TaskRecord,
  now: number,
  statusMessage: string | null,
): TaskRecord {
  assertStorable("the status message", statusMessage);
  assertIntentAllowed(task, "setStatusMessage");
  const next = copyRecord(task);
  next.statusMessage = statusMessage;
  next.lastUpdatedAt = now;
  return next;
}

/**
 * Records the wish to cancel. Idempotent: the first request's time is kept, a repeated
 * request or a request on a finished task changes nothing (and returns the same record).
 */
export function requestTaskCancel(task: TaskRecord, now: number): TaskRecord {
  if (isTerminal(task.status) || task.cancelRequestedAt !== null) return task;
  const next = copyRecord(task);
  next.cancelRequestedAt = now;
  next.lastUpdatedAt = now;
  return next;
}

/** The outcome of {@link submitTaskInput}. */
export interface SubmitInputResult {
  readonly task: TaskRecord;
  /** The keys that were outstanding and are now answered. */
  readonly acceptedKeys: readonly string[];
}

/**
 * Applies answers by key. Only outstanding keys are accepted, each once; unknown and
 * already-answered keys are ignored; partial answers are fine. When no request remains
 * outstanding the task goes back to `working`. A finished task accepts nothing.
 */
export function submitTaskInput(
  task: TaskRecord,
  now: number,
  responses: Readonly<Record<string, InputResponse>>,
): SubmitInputResult {
  assertStorable("the input responses", responses);
  const acceptedKeys: string[] = [];
  for (const key of Object.keys(responses)) {
    if (Object.hasOwn(task.inputRequests, key)) acceptedKeys.push(key);
  }
  if (acceptedKeys.length === 0) return { task, acceptedKeys };
  const pending: Record<string, InputRequest> = { ...task.inputRequests };
  const received: Record<string, InputResponse> = { ...task.inputResponses };
  for (const key of acceptedKeys) {
    delete pending[key];
    received[key] = responses[key] as InputResponse;
  }
  const remaining = Object.keys(pending).length;
  const next = copyRecord(task);
  next.status = remaining === 0 ? "working" : task.status;
  next.inputRequests = remaining === 0 ? EMPTY : pending;
  next.inputResponses = received;
  next.answeredInputKeys = [...task.answeredInputKeys, ...acceptedKeys];
  const answers: Record<string, InputResponse> = { ...task.inputAnswers };
  for (const key of acceptedKeys) answers[key] = responses[key] as InputResponse;
  next.inputAnswers = answers;
  next.lastUpdatedAt = now;
  return { task: next, acceptedKeys };
}

/** The outcome of {@link takeTaskInputResponses}. */
export interface TakeInputResult {
  readonly task: TaskRecord;
  readonly responses: Readonly<Record<string, InputResponse>>;
}

/** Drains the received responses: they are handed over once and removed from the task. */
export function takeTaskInputResponses(task: TaskRecord): TakeInputResult {
  const responses = task.inputResponses;
  if (Object.keys(responses).length === 0) return { task, responses: EMPTY };
  // Draining is the worker's bookkeeping, not news for the client: lastUpdatedAt stays.
  const next = copyRecord(task);
  next.inputResponses = EMPTY;
  return { task: next, responses };
}

/** True when a terminal task's retention has run out at `now`. Running tasks never expire. */
export function isExpired(task: Pick<TaskRecord, "expiresAt">, now: number): boolean {
  return task.expiresAt !== null && task.expiresAt <= now;
}
