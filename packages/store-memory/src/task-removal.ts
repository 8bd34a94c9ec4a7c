import { noteChange } from "./change-log.js";
import { leaveQueue } from "./queue-tracking.js";
import type { Slot } from "./slot.js";
import type { StoreState } from "./store-state.js";
import { dropSlot } from "./task-table.js";

/** Forgets a task everywhere: the queue indexes, the table, its owner's counters. */
export function removeTask(state: StoreState, slot: Slot): void {
  if (slot.deleted) return;
  slot.deleted = true;
  leaveQueue(state, slot);
  dropSlot(state, slot);
}

/**
 * Removes up to `limit` expired tasks, oldest expiry first, and notes each as `deleted`.
 * O(removed · log n) through the expiry heap; slots already removed are skipped.
 */
export function sweepExpired(state: StoreState, limit: number): number {
  const now = state.clock.now();
  let removed = 0;
  while (removed < limit) {
    const key = state.expiry.peekKey();
    if (key === undefined || key > now) break;
    const slot = state.expiry.pop()!;
    if (slot.deleted) continue;
    removeTask(state, slot);
    noteChange(state, slot.record, "deleted");
    removed++;
  }
  return removed;
}
