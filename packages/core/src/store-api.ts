/**
 * `@mcp-tasks/core/store`: for store authors. The pure lifecycle functions and tables a
 * store's conditional writes must reproduce, record construction and validation, expiry,
 * cursors, owner scopes and keys, the in-process change feed, the lease extension of the
 * store contract, the error constructors with their shared wording and the TTL helpers.
 *
 * The types a store implements and returns (`TaskStore`, `TaskRecord`, `TaskChange`, …)
 * come from `@mcp-tasks/core`; the contract suite from `@mcp-tasks/core/testing`. Each name
 * is exported by exactly one of the three entries.
 *
 * @packageDocumentation
 */
export { ChangeFeed } from "./change-feed.js";
export { decodeCursor, decodeSequenceCursor, encodeCursor } from "./cursor.js";
export { taskErrors } from "./errors.js";
export {
  countedRunning,
  underOwnerLimits,
  underRunningLimit,
  validateOwnerLimits,
} from "./fairness.js";
export { type FollowSource, followTask, subscribeToTask } from "./follow.js";
export {
  MAX_LEASE_HOLDER_LENGTH,
  validateClaim,
  validateLeaseHolder,
  validateLeaseMs,
} from "./lease-arguments.js";
export {
  assertFreshInputKeys,
  completeTask,
  expiryOnTerminal,
  failTask,
  isExpired,
  markTaskCancelled,
  requestTaskCancel,
  requireTaskInput,
  setTaskStatusMessage,
  submitTaskInput,
  takeTaskInputResponses,
} from "./lifecycle.js";
export { executionPolicy, newTaskRecord, validateNewTask } from "./new-task.js";
export {
  type OwnerScope,
  ownerKey,
  ownerScope,
  scopeAllows,
  scopeAllowsKey,
  UNOWNED_KEY,
} from "./owner.js";
export {
  answerBytes,
  outcomeBytes,
  payloadBytes,
  taskPayloadBytes,
  utf8Length,
} from "./payload.js";
export {
  assertFence,
  claimTask,
  endCancelRequested,
  holdsTask,
  isClaimable,
  isOrphaned,
  recoverOrphan,
  releaseTask,
  renewTaskLease,
  requeueTask,
} from "./queue-lifecycle.js";
export { orphanSweepOf, supportsQueue, type TaskQueueStore } from "./queue-store.js";
export {
  attemptsAfterRequeue,
  CANCELLED_WITHOUT_RUN_MESSAGE,
  DEADLINE_EXCEEDED_REASON,
  deadlineExceededError,
  errorRetryReason,
  HANDED_BACK_MESSAGE,
  type NextAttempt,
  nextAttempt,
  type Requeue,
  type RunEnding,
  retryBackoffOf,
  retryingMessage,
  WORKER_LOST_ERROR,
  WORKER_LOST_REASON,
} from "./retry-policy.js";
export {
  assertStorable,
  assertStorableOwner,
  holdsUnstorableText,
  UNSTORABLE_CHARACTER,
  unstorableTextAt,
} from "./storable.js";
export type { ListQuery, NewestQuery } from "./store.js";
export type { NewTask } from "./task.js";
export { changeOf } from "./task-change.js";
export {
  ACTIVE_STATUSES,
  assertIntentAllowed,
  canTransition,
  INTENT_FROM,
  type Intent,
  TERMINAL_EFFECTS,
  type TerminalEffect,
  TRANSITIONS,
} from "./transitions.js";
export { resolveTtl, ttlPolicy } from "./ttl.js";
export type { UsageAudit, UsageCounts, UsageSnapshot } from "./usage.js";
