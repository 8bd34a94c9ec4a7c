/**
 * A new task: what a store is asked to create, checked, and the record it starts as.
 */

import { taskErrors } from "./errors.js";
import { validateOwnerLimits } from "./fairness.js";
import { validateLeaseHolder } from "./lease-arguments.js";
import type { Owner } from "./owner.js";
import { EMPTY, NO_KEYS } from "./record-copy.js";
import { assertStorable, assertStorableOwner } from "./storable.js";
import {
  DEFAULT_EXECUTION_POLICY,
  type ExecutionPolicy,
  type NewTask,
  type TaskRecord,
} from "./task.js";
import { extractTraceContext } from "./trace-context.js";

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
  if (input.lease !== undefined) validateLeaseHolder(input.lease.holder, "lease.holder");
  assertStorable("the lease holder", input.lease?.holder);
  return policy;
}

const MAX_TIMER_MS = 2_147_483_647;

/** The execution policy a task is created with: `policy` over the defaults, checked. */
export function executionPolicy(policy: Partial<ExecutionPolicy> = {}): ExecutionPolicy {
  // Not `{ ...DEFAULT_EXECUTION_POLICY, ...policy }` (every create): see "Hot paths" in
  // docs/architecture.md.
  const merged = Object.assign({}, DEFAULT_EXECUTION_POLICY, policy);
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
