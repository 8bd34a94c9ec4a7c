import type { Slot } from "./slot.js";

/** One owner's tasks in creation order; deleted slots are skipped and compacted lazily. */
export class OwnerList {
  slots: Slot[] = [];
  live = 0;
  /** The payload bytes of its slots not yet removed (expired but unswept ones included). */
  bytes = 0;

  /** Index of the first slot with `seq > after`. */
  firstAfter(after: number): number {
    const slots = this.slots;
    let lo = 0;
    let hi = slots.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (slots[mid]!.seq <= after) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Drops the deleted slots once they outnumber the live ones (amortised O(1) per delete). */
  compactIfSparse(): void {
    const dead = this.slots.length - this.live;
    if (dead > 32 && dead > this.live) this.slots = this.slots.filter((s) => !s.deleted);
  }
}

/** Index of the last slot with `seq < before` in a creation-ordered list; -1 for none. */
export function lastBefore(slots: readonly Slot[], before: number): number {
  let lo = 0;
  let hi = slots.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (slots[mid]!.seq < before) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}
