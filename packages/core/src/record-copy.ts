/**
 * Internal: how the lifecycle functions build a changed record. Records are immutable;
 * every change is a field-by-field copy with the version advanced.
 */

import type { TaskRecord } from "./task.js";

/** The shared empty map of a record with no requests, responses or answers. */
export const EMPTY: Readonly<Record<string, never>> = Object.freeze({});
/** The shared empty list of a record with no answered keys. */
export const NO_KEYS: readonly string[] = Object.freeze([]);

/** A record type with its fields writable, while a copy is built. */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * A field-by-field copy. Every record is built from this one literal, so all records share
 * one hidden class; object spread of a record this wide is several times slower in V8, and
 * stores pay for the copy on every write.
 */
export function copyRecord(t: TaskRecord): Mutable<TaskRecord> {
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
export function copyExecution(e: Execution, change: Partial<Mutable<Execution>>): Execution {
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
export function releasedExecution(e: Execution): Execution {
  // Records are immutable, so an execution that already says so is shared, not copied
  // (a task finished by its creator, never claimed, keeps the one it was created with).
  if (e.holder === null && e.leaseExpiresAt === null && e.availableAt === null) return e;
  return copyExecution(e, { holder: null, leaseExpiresAt: null, availableAt: null });
}
