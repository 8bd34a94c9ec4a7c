import type { TaskRecord } from "@mcp-tasks/core";
import type { HeapEntry, QueueMark } from "./queue.js";

/**
 * One stored task plus the bookkeeping the indexes need. A class (not a record with the
 * fields spread in) so every slot shares one shape and the indexes' reads stay monomorphic.
 */
export class Slot {
  record: TaskRecord;
  /** Creation sequence: the order of listings, queues and cursors. */
  readonly seq: number;
  readonly ownerKey: string;
  /** The payload bytes it holds (see `taskPayloadBytes`), counted in its owner's list. */
  bytes = 0;
  deleted = false;
  /** Its place in the queue while it is queued (running, no holder). */
  queueMark: QueueMark<Slot> | null = null;
  /** Its place among the lease deadlines while it is held; the key may lag a renewal. */
  leaseEntry: HeapEntry<Slot> | null = null;

  constructor(record: TaskRecord, seq: number, key: string) {
    this.record = record;
    this.seq = seq;
    this.ownerKey = key;
  }
}
