import { taskErrors } from "./errors.js";
import { validateOwnerLimits } from "./fairness.js";
import type { Owner } from "./owner.js";
import { assertStorable, assertStorableOwner } from "./storable.js";
import {
  DEFAULT_EXECUTION_POLICY,
  type ExecutionPolicy,
  type Fence,
  INTERNAL_ERROR_CODE,
  type InputRequest,
  type InputResponse,
  type JsonRpcErrorObject,
  type NewTask,
  type TaskRecord,
  type TaskStatus,
} from "./task.js";
import { extractTraceContext } from "./trace-context.js";

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

/** When a task reaching a terminal state at `now` may be removed. */
export function expiryOnTerminal(task: TaskRecord, now: number): number | null {
  if (task.ttlMs === null) return null;
  return (task.ttlAnchor === "creation" ? task.createdAt : now) + task.ttlMs;
}

const EMPTY: Readonly<Record<string, never>> = Object.freeze({});
const NO_KEYS: readonly string[] = Object.freeze([]);

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * A field-by-field copy. Every record is built from this one literal, so all records share
 * one hidden class; object spread of a record this wide is several times slower in V8, and
 * stores pay for the copy on every write.
 */
function copyRecord(t: TaskRecord): Mutable<TaskRecord> {
  return {
    taskId: t.taskId,
    status: t.status,
    statusMessage: t.statusMessage,
    createdAt: t.createdAt,
    lastUpdatedAt: t.lastUpdatedAt,
    ttlMs: t.ttlMs,
    ttlAnchor: t.ttlAnchor,
    expiresAt: t.expiresAt,
    pollIntervalMs: t.pollIntervalMs,
    owner: t.owner,
    era: t.era,
    request: t.request,
    outcome: t.outcome,
    inputRequests: t.inputRequests,
    inputResponses: t.inputResponses,
    answeredInputKeys: t.answeredInputKeys,
    inputAnswers: t.inputAnswers,
    cancelRequestedAt: t.cancelRequestedAt,
    execution: t.execution,
    traceContext: t.traceContext,
    version: t.version + 1,
  };
}

type Execution = TaskRecord["execution"];

/**
 * A copy of an execution state with some fields changed. One literal with every field, for
 * the same reason as {@link copyRecord}: a spread (`{ ...e, holder }`) gives V8 an object
 * with most fields out of line, a second hidden class and a separate property array to
 * allocate and copy.
 */
function copyExecution(e: Execution, change: Partial<Mutable<Execution>>): Execution {
  return {
    maxAttempts: e.maxAttempts,
    backoffMs: e.backoffMs,
    retryOnError: e.retryOnError,
    deadlineMs: e.deadlineMs,
    attempt: change.attempt ?? e.attempt,
    holder: change.holder === undefined ? e.holder : change.holder,
    fencingToken: change.fencingToken ?? e.fencingToken,
    leaseExpiresAt: change.leaseExpiresAt === undefined ? e.leaseExpiresAt : change.leaseExpiresAt,
    availableAt: change.availableAt === undefined ? e.availableAt : change.availableAt,
  };
}

/** The execution state of a task that just finished: no run holds it, nothing is queued. */
function releasedExecution(e: Execution): Execution {
  // Records are immutable, so an execution that already says so is shared, not copied
  // (a task finished by its creator, never claimed, keeps the one it was created with).
  if (e.holder === null && e.leaseExpiresAt === null && e.availableAt === null) return e;
  return copyExecution(e, { holder: null, leaseExpiresAt: null, availableAt: null });
}

/**
 * Checks what a store is asked to create, and for whom; throws `invalid_task`. Returns its
 * policy. Every text in it must be storable (no U+0000, see `assertStorable`).
 */
export function validateNewTask(input: NewTask, owner?: Owner): ExecutionPolicy {
  if (typeof input.taskId !== "string" || input.taskId.length === 0 || input.taskId.length > 128) {
    throw taskErrors.invalidTask("taskId must be a non-empty string of at most 128 characters");
  }
  assertStorable("the task id", input.taskId);
  if (owner !== undefined) assertStorableOwner(owner);
  if (input.ttlMs !== null && !(Number.isSafeInteger(input.ttlMs) && input.ttlMs > 0)) {
    throw taskErrors.invalidTask("ttlMs must be a positive integer or null");
  }
  if (
    input.pollIntervalMs !== null &&
    !(Number.isSafeInteger(input.pollIntervalMs) && input.pollIntervalMs > 0)
  ) {
    throw taskErrors.invalidTask("pollIntervalMs must be a positive integer or null");
  }
  if (typeof input.request?.toolName !== "string" || input.request.toolName.length === 0) {
    throw taskErrors.invalidTask("request.toolName must be a non-empty string");
  }
  assertStorable("the request", input.request);
  assertStorable("the status message", input.statusMessage);
  const policy = executionPolicy(input.execution);
  validateOwnerLimits(input.ownerLimits);
  if (
    input.lease !== undefined &&
    !(
      typeof input.lease.holder === "string" &&
      input.lease.holder.length > 0 &&
      Number.isSafeInteger(input.lease.durationMs) &&
      input.lease.durationMs > 0
    )
  ) {
    throw taskErrors.invalidTask("lease needs a holder and a positive integer durationMs");
  }
  assertStorable("the lease holder", input.lease?.holder);
  return policy;
}

const MAX_TIMER_MS = 2_147_483_647;

/** The execution policy a task is created with: `policy` over the defaults, checked. */
export function executionPolicy(policy: Partial<ExecutionPolicy> = {}): ExecutionPolicy {
  const merged = { ...DEFAULT_EXECUTION_POLICY, ...policy };
  const { maxAttempts, backoffMs, deadlineMs } = merged;
  if (!(Number.isSafeInteger(maxAttempts) && maxAttempts >= 1 && maxAttempts <= 100)) {
    throw taskErrors.invalidTask("execution.maxAttempts must be an integer from 1 to 100");
  }
  // Both become timers (or int columns): at most 2^31 - 1 ms, about 24.8 days.
  if (!(Number.isSafeInteger(backoffMs) && backoffMs >= 0 && backoffMs <= MAX_TIMER_MS)) {
    throw taskErrors.invalidTask("execution.backoffMs must be an integer from 0 to 2147483647");
  }
  if (
    deadlineMs !== null &&
    !(Number.isSafeInteger(deadlineMs) && deadlineMs > 0 && deadlineMs <= MAX_TIMER_MS)
  ) {
    throw taskErrors.invalidTask(
      "execution.deadlineMs must be an integer from 1 to 2147483647, or null",
    );
  }
  return {
    maxAttempts,
    backoffMs,
    retryOnError: merged.retryOnError === true,
    deadlineMs,
  };
}

/** A new `working` task at version 1. Pure; stores may use it or write the same in SQL. */
export function newTaskRecord(input: NewTask, owner: Owner, now: number): TaskRecord {
  const policy = validateNewTask(input, owner);
  const lease = input.lease;
  return {
    taskId: input.taskId,
    status: "working",
    statusMessage: input.statusMessage ?? null,
    createdAt: now,
    lastUpdatedAt: now,
    ttlMs: input.ttlMs,
    ttlAnchor: input.ttlAnchor,
    expiresAt: null,
    pollIntervalMs: input.pollIntervalMs,
    owner,
    era: input.era,
    request: input.request,
    outcome: null,
    inputRequests: EMPTY,
    inputResponses: EMPTY,
    answeredInputKeys: NO_KEYS,
    inputAnswers: EMPTY,
    cancelRequestedAt: null,
    // A literal with every field (no spread): it is a fraction of the size in V8.
    execution: {
      maxAttempts: policy.maxAttempts,
      backoffMs: policy.backoffMs,
      retryOnError: policy.retryOnError,
      deadlineMs: policy.deadlineMs,
      attempt: lease ? 1 : 0,
      holder: lease ? lease.holder : null,
      fencingToken: lease ? 1 : 0,
      leaseExpiresAt: lease ? now + lease.durationMs : null,
      availableAt: null,
    },
    traceContext: extractTraceContext(input.traceContext),
    version: 1,
  };
}

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
  next.expiresAt = expiryOnTerminal(task, now);
  // Nothing can answer a finished task's questions any more, and no run holds it.
  next.inputRequests = EMPTY;
  next.execution = releasedExecution(task.execution);
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

/** The status message of a task a stopping worker handed back to the queue. */
export const HANDED_BACK_MESSAGE = "Queued: handed back by a stopping worker";

/** A stopping worker hands the task back: queued at once, the attempt not counted. */
export function releaseTask(task: TaskRecord, now: number): TaskRecord {
  return requeueTask(task, now, {
    countAttempt: false,
    backoffMs: 0,
    statusMessage: HANDED_BACK_MESSAGE,
  });
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

/** How a task goes back to the queue. */
export interface Requeue {
  /** Whether the run that ends counts as an attempt (a graceful hand-back does not). */
  readonly countAttempt: boolean;
  /** Wait before the next claim, in ms. */
  readonly backoffMs: number;
  readonly statusMessage: string | null;
}

/**
 * Back to the queue: the task stays running (`working`), no run holds it, the questions
 * of the abandoned run are dropped (their answers stay in `inputAnswers`).
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
    attempt: requeue.countAttempt ? e.attempt : Math.max(0, e.attempt - 1),
    holder: null,
    leaseExpiresAt: null,
    availableAt: requeue.backoffMs > 0 ? now + requeue.backoffMs : null,
  });
  return next;
}

/** The status message of a task waiting for its next attempt. */
export function retryingMessage(reason: string, nextAttempt: number, maxAttempts: number): string {
  return `Retrying after ${reason} (attempt ${nextAttempt} of ${maxAttempts})`;
}

/** The error a task fails with when its last run's worker was lost. */
export const WORKER_LOST_ERROR: JsonRpcErrorObject = Object.freeze({
  code: INTERNAL_ERROR_CODE,
  message: "Worker lost: the node running this task stopped renewing its lease",
});

/** True when the task's lease ran out at `now` (its worker died or stalled). */
export function isOrphaned(task: TaskRecord, now: number): boolean {
  const { holder, leaseExpiresAt } = task.execution;
  return (
    !isTerminal(task.status) && holder !== null && leaseExpiresAt !== null && leaseExpiresAt <= now
  );
}

/** The status message of a cancel-requested task that ended without its run's acknowledgement. */
export const CANCELLED_WITHOUT_RUN_MESSAGE =
  "The task was cancelled by request (its run ended before acknowledging it).";

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
 * any other goes back to the queue while attempts remain, after its backoff, and otherwise
 * fails with {@link WORKER_LOST_ERROR}.
 */
export function recoverOrphan(task: TaskRecord, now: number): TaskRecord {
  if (task.cancelRequestedAt !== null) return endCancelRequested(task, now);
  const e = task.execution;
  if (e.attempt < e.maxAttempts) {
    return requeueTask(task, now, {
      countAttempt: true,
      backoffMs: e.backoffMs,
      statusMessage: retryingMessage("the worker was lost", e.attempt + 1, e.maxAttempts),
    });
  }
  return failTask(task, now, WORKER_LOST_ERROR);
}
