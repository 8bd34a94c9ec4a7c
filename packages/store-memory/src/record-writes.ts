import { isTerminal, type TaskChangeKind, type TaskRecord } from "@mcp-tasks/core";
import { outcomeBytes } from "@mcp-tasks/core/store";
import { noteChange } from "./change-log.js";
import { trackQueue } from "./queue-tracking.js";
import type { Slot } from "./slot.js";
import type { StoreState } from "./store-state.js";
import { addBytes } from "./task-table.js";

/*
 * Storing the records core's lifecycle functions compute. The transition rules (which
 * intent may start from which status, what each write sets) are core's alone: these
 * functions only put the next record in place, keep the indexes exact and notify watchers.
 */

/** Stores `next` as the task's record (still running) and notes a `kind` change. */
export function replaceRecord(
  state: StoreState,
  slot: Slot,
  next: TaskRecord,
  kind: TaskChangeKind,
): TaskRecord {
  const prev = slot.record;
  slot.record = next;
  trackQueue(state, slot, prev);
  noteChange(state, next, kind);
  return next;
}

/** Stores the task's terminal record: its outcome counted, its expiry scheduled. */
export function finishRecord(state: StoreState, slot: Slot, next: TaskRecord): TaskRecord {
  const prev = slot.record;
  // A run's outcome is never refused by the byte quota (that would lose finished work),
  // but it counts against the owner from now on.
  if (state.countBytes) addBytes(state, slot, outcomeBytes(next.outcome));
  slot.record = next;
  trackQueue(state, slot, prev);
  if (next.expiresAt !== null) state.expiry.push(next.expiresAt, slot);
  noteChange(state, next, "status_changed");
  return next;
}

/** A task requeued (`queued`), or ended instead (a recorded cancel, no attempt left). */
export function requeueOrEnd(state: StoreState, slot: Slot, next: TaskRecord): TaskRecord {
  return isTerminal(next.status)
    ? finishRecord(state, slot, next)
    : replaceRecord(state, slot, next, "queued");
}
