import { isTerminal } from "@mcp-tasks/core";
import { HeapEntry, type LazyHeap } from "./queue.js";
import type { Slot } from "./slot.js";

/**
 * The held tasks by lease deadline, so orphan recovery pops the expired leases in
 * O(orphans · log n). A renewal keeps the entry and its earlier key (corrected when that
 * key comes up), so renewing costs O(1).
 */
export interface LeaseIndex {
  /** Held tasks keyed by lease deadline; a key may be earlier than a renewed deadline. */
  readonly leases: LazyHeap<Slot>;
}

/** Keeps the lease heap exact for the slot; `sameRun` when the holder and token held. */
export function trackLease(index: LeaseIndex, slot: Slot, sameRun: boolean): void {
  const { status, execution } = slot.record;
  const deadline = execution.leaseExpiresAt;
  if (isTerminal(status) || execution.holder === null || deadline === null) {
    forgetLease(slot);
    return;
  }
  const current = slot.leaseEntry;
  // A key earlier than the deadline is corrected lazily; a later one (a new run, or a
  // renewal that shortened the lease) needs a new entry so the orphan is not found late.
  if (current !== null && sameRun && current.key <= deadline) return;
  current?.kill();
  const entry = new HeapEntry(slot);
  slot.leaseEntry = entry;
  index.leases.push(deadline, entry);
}

/** Takes the slot out of the lease heap (lazily: its entry is skipped when reached). */
export function forgetLease(slot: Slot): void {
  slot.leaseEntry?.kill();
  slot.leaseEntry = null;
}
