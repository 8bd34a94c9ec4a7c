import { type Clock, systemClock, type TaskChange } from "@mcp-tasks/core";
import { ChangeFeed } from "@mcp-tasks/core/store";
import type { ChangeLog } from "./change-log.js";
import { MinHeap } from "./heap.js";
import type { LeaseIndex } from "./lease-index.js";
import { type MemoryTaskStoreOptions, resolveBounds, type StoreBounds } from "./options.js";
import { OwnerList } from "./owner-list.js";
import { LazyHeap, type ToolQueue } from "./queue.js";
import type { QueueUsage, QueueUse } from "./queue-use.js";
import type { ReadyQueues } from "./ready-queues.js";
import type { Slot } from "./slot.js";
import type { TaskTable } from "./task-table.js";

/**
 * Everything one memory store holds. Each concern's module declares the part it works on
 * (`TaskTable`, `ReadyQueues`, …) and takes that part as an argument; the parts live on this
 * one object, so the functions see one shape (monomorphic property reads) and reach a field
 * in one step, as the store's own fields did.
 */
export class StoreState
  implements StoreBounds, TaskTable, QueueUsage, ReadyQueues, LeaseIndex, ChangeLog
{
  readonly clock: Clock;
  closed = false;

  readonly maxTasks: number;
  readonly maxTasksPerOwner: number;
  readonly maxBytesPerOwner: number;
  readonly countBytes: boolean;
  readonly maxPageSize: number;
  readonly sweepIntervalMs: number;

  readonly tasks = new Map<string, Slot>();
  readonly owners = new Map<string, OwnerList>();
  readonly everyone = new OwnerList();
  readonly expiry = new MinHeap<Slot>();
  seq = 0;

  readonly queueUse = new Map<string, QueueUse>();
  readonly ready = new Map<string, Map<string, ToolQueue<Slot>>>();
  readonly delayed = new LazyHeap<Slot>();
  readonly leases = new LazyHeap<Slot>();

  readonly feed = new ChangeFeed();
  readonly pending: TaskChange[] = [];

  constructor(options: MemoryTaskStoreOptions) {
    this.clock = options.clock ?? systemClock;
    const bounds = resolveBounds(options);
    this.maxTasks = bounds.maxTasks;
    this.maxTasksPerOwner = bounds.maxTasksPerOwner;
    this.maxBytesPerOwner = bounds.maxBytesPerOwner;
    this.countBytes = bounds.countBytes;
    this.maxPageSize = bounds.maxPageSize;
    this.sweepIntervalMs = bounds.sweepIntervalMs;
  }
}
