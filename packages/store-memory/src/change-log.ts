import type { TaskChange, TaskChangeKind, TaskRecord } from "@mcp-tasks/core";
import { type ChangeFeed, changeOf } from "@mcp-tasks/core/store";

/**
 * The change notifications of one store: core's feed, and the changes of the current
 * operation waiting to be delivered.
 */
export interface ChangeLog {
  readonly feed: ChangeFeed;
  /** Changes not yet delivered, in commit order. */
  readonly pending: TaskChange[];
}

/** Notes a change of `record` for its watchers (nothing is built when it has none). */
export function noteChange(log: ChangeLog, record: TaskRecord, kind: TaskChangeKind): void {
  if (!log.feed.hasListeners(record.taskId)) return;
  // Delivered after the current operation returns, in commit order, so a listener that
  // calls back into the store never interleaves with the write that woke it.
  log.pending.push(changeOf(record, kind));
  if (log.pending.length === 1) queueMicrotask(() => deliverChanges(log));
}

/** Hands the pending changes to the feed. */
function deliverChanges(log: ChangeLog): void {
  const batch = log.pending.splice(0);
  for (const change of batch) log.feed.emit(change);
}
