import type { OrphanSweep, TaskRecord } from "@mcp-tasks/core";
import { isOrphaned, orphanSweepOf, recoverOrphan } from "@mcp-tasks/core/store";
import { requeueOrEnd } from "./record-writes.js";
import type { StoreState } from "./store-state.js";

/**
 * Recovers up to `limit` tasks whose lease ran out, earliest deadline first, as core's
 * `recoverOrphan` says: requeued, or failed (no attempt left), or cancelled (a cancel was
 * requested). O(orphans · log n) through the lease heap.
 */
export function recoverExpiredLeases(state: StoreState, limit: number): OrphanSweep {
  let requeued = 0;
  const failedTasks: TaskRecord[] = [];
  const cancelledTasks: TaskRecord[] = [];
  const now = state.clock.now();
  while (requeued + failedTasks.length + cancelledTasks.length < limit) {
    const key = state.leases.peekKey();
    if (key === undefined || key > now) break;
    const entry = state.leases.pop()!;
    const slot = entry.item;
    const record = slot.record;
    if (!isOrphaned(record, now)) {
      // Renewed since the entry was pushed: it comes up again at the new deadline.
      state.leases.push(record.execution.leaseExpiresAt!, entry);
      continue;
    }
    slot.leaseEntry = null;
    const next = requeueOrEnd(state, slot, recoverOrphan(record, now));
    if (next.status === "failed") failedTasks.push(next);
    else if (next.status === "cancelled") cancelledTasks.push(next);
    else requeued++;
  }
  return orphanSweepOf(requeued, failedTasks, cancelledTasks);
}
