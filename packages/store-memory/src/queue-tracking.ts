import { type Clock, isTerminal, type TaskRecord } from "@mcp-tasks/core";
import { forgetLease, type LeaseIndex, trackLease } from "./lease-index.js";
import { countUse, type QueueUsage, queueState } from "./queue-use.js";
import { enqueue, type ReadyQueues, unqueue } from "./ready-queues.js";
import type { Slot } from "./slot.js";

/** Every index of the queue, and the clock that says whether a backoff is over. */
export type QueueIndexes = ReadyQueues & QueueUsage & LeaseIndex & { readonly clock: Clock };

/**
 * Keeps the queue and lease indexes exact after `slot.record` changed from `prev` (`null`
 * for a new task): a running task without a holder is queued (ready or, during its
 * backoff, delayed), a running task with one is in the lease heap, others in neither.
 */
export function trackQueue(indexes: QueueIndexes, slot: Slot, prev: TaskRecord | null): void {
  const next = slot.record;
  const was = prev === null ? null : queueState(prev);
  const now = queueState(next);
  if (was !== now) countUse(indexes, slot.ownerKey, was, now);
  // Most writes (a status message, a cancel request, input) keep the execution state and
  // stay running: nothing to re-index, and the execution object is not even read (at
  // 100 000 tasks it is one more cache miss per write).
  if (
    prev !== null &&
    next.execution === prev.execution &&
    isTerminal(next.status) === isTerminal(prev.status)
  ) {
    return;
  }
  const running = !isTerminal(next.status);
  const queued = running && next.execution.holder === null;
  if (!queued) {
    unqueue(indexes, slot);
  } else if (
    slot.queueMark === null ||
    prev === null ||
    prev.execution.availableAt !== next.execution.availableAt
  ) {
    unqueue(indexes, slot);
    enqueue(indexes, slot, prev === null, indexes.clock.now());
  }
  const sameRun =
    prev !== null &&
    prev.execution.holder === next.execution.holder &&
    prev.execution.fencingToken === next.execution.fencingToken;
  trackLease(indexes, slot, sameRun);
}

/** Takes a removed task out of every queue index. */
export function leaveQueue(indexes: QueueIndexes, slot: Slot): void {
  const state = queueState(slot.record);
  if (state !== null) countUse(indexes, slot.ownerKey, state, null);
  unqueue(indexes, slot);
  forgetLease(slot);
}
