import type { TaskRecord } from "@mcp-tasks/core";
import type { MinHeap } from "./heap.js";
import { OwnerList } from "./owner-list.js";
import { Slot } from "./slot.js";

/**
 * The record table and its indexes: `get` is a hash lookup, one owner's listing walks its
 * own creation-ordered list, and expiry pops a min-heap, with no timer per task. The owner
 * lists also carry the quota counters (tasks and payload bytes), kept as tasks come and go
 * so a quota check costs O(1).
 */
export interface TaskTable {
  readonly tasks: Map<string, Slot>;
  /** Each owner's tasks in creation order, by owner key; an owner with none is left out. */
  readonly owners: Map<string, OwnerList>;
  /** Every owner's tasks in creation order, for the operator's newest-first listing. */
  readonly everyone: OwnerList;
  /** Finished tasks keyed by `expiresAt`; removed ones are skipped when popped. */
  readonly expiry: MinHeap<Slot>;
  /** The creation sequence of the newest task. */
  seq: number;
}

/**
 * Adds a new task to the table and its owner's list. `list` is that owner's list when the
 * caller already looked it up (`undefined` for an owner holding nothing), to save a lookup.
 */
export function insertSlot(
  table: TaskTable,
  record: TaskRecord,
  key: string,
  bytes: number,
  list: OwnerList | undefined,
): Slot {
  const slot = new Slot(record, ++table.seq, key);
  slot.bytes = bytes;
  table.tasks.set(record.taskId, slot);
  let own = list;
  if (!own) {
    own = new OwnerList();
    table.owners.set(key, own);
  }
  own.slots.push(slot);
  own.live++;
  own.bytes += bytes;
  table.everyone.slots.push(slot);
  table.everyone.live++;
  return slot;
}

/** Takes a removed task out of the table and the lists, and its bytes off its owner's count. */
export function dropSlot(table: TaskTable, slot: Slot): void {
  table.tasks.delete(slot.record.taskId);
  table.everyone.live--;
  table.everyone.compactIfSparse();
  const list = table.owners.get(slot.ownerKey);
  if (list) {
    list.live--;
    list.bytes -= slot.bytes;
    if (list.live === 0) table.owners.delete(slot.ownerKey);
    else list.compactIfSparse();
  }
}

/** Counts `added` payload bytes on the task and its owner (nothing once it is removed). */
export function addBytes(table: TaskTable, slot: Slot, added: number): void {
  if (added === 0 || slot.deleted) return;
  slot.bytes += added;
  const list = table.owners.get(slot.ownerKey);
  if (list) list.bytes += added;
}
