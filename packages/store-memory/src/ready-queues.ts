import { FRESH, HeapEntry, type LazyHeap, ToolQueue } from "./queue.js";
import type { Slot } from "./slot.js";

/**
 * The queued tasks (running, no holder): those claimable now per owner and tool in creation
 * order (see `ToolQueue`), and those waiting out a backoff in a heap keyed by when they may
 * run. A claim pops the queues it needs, so it costs O(claimed · log n), never a scan.
 */
export interface ReadyQueues {
  /** Queued tasks claimable now, per owner key and tool, in creation order. */
  readonly ready: Map<string, Map<string, ToolQueue<Slot>>>;
  /** Queued tasks waiting out a backoff, keyed by `availableAt`. */
  readonly delayed: LazyHeap<Slot>;
}

/** The queue of the task's owner and tool, made when it has none. */
export function toolQueueOf(queues: ReadyQueues, slot: Slot): ToolQueue<Slot> {
  const toolName = slot.record.request.toolName;
  let byTool = queues.ready.get(slot.ownerKey);
  if (byTool === undefined) {
    byTool = new Map();
    queues.ready.set(slot.ownerKey, byTool);
  }
  let queue = byTool.get(toolName);
  if (queue === undefined) {
    queue = new ToolQueue<Slot>();
    byTool.set(toolName, queue);
  }
  return queue;
}

/** Forgets an owner's queue of one tool that holds nothing any more. */
export function dropQueue(queues: ReadyQueues, key: string, toolName: string): void {
  const byTool = queues.ready.get(key);
  if (byTool === undefined) return;
  byTool.delete(toolName);
  if (byTool.size === 0) queues.ready.delete(key);
}

/**
 * Puts a queued slot in the queue: during a backoff (past `now`) in the delayed heap, else
 * in its tool's queue (at the end of the list when `created`, the youngest task of all).
 */
export function enqueue(queues: ReadyQueues, slot: Slot, created: boolean, now: number): void {
  const at = slot.record.execution.availableAt;
  if (at !== null && at > now) {
    const entry = new HeapEntry(slot);
    slot.queueMark = entry;
    queues.delayed.push(at, entry);
  } else if (created) {
    toolQueueOf(queues, slot).append(slot);
  } else {
    toolQueueOf(queues, slot).reenter(slot);
  }
}

/** Takes the slot out of the queue (lazily: its entry is skipped when reached). */
export function unqueue(queues: ReadyQueues, slot: Slot): void {
  const mark = slot.queueMark;
  if (mark === null) return;
  slot.queueMark = null;
  if (mark === FRESH) {
    queues.ready.get(slot.ownerKey)?.get(slot.record.request.toolName)?.noteListDeath();
  } else mark.kill();
}

/** Moves queued tasks whose backoff ended by `now` into their tool's queue. */
export function promoteDue(queues: ReadyQueues, now: number): void {
  for (;;) {
    const key = queues.delayed.peekKey();
    if (key === undefined || key > now) return;
    const entry = queues.delayed.pop()!;
    toolQueueOf(queues, entry.item).adopt(entry);
  }
}
