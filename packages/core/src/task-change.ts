import type { TaskChange, TaskChangeKind } from "./store.js";
import type { TaskRecord } from "./task.js";

/**
 * The change event of `kind` for `record`, as every store announces it: a `queued` change
 * names the task's tool, so that a worker that does not run that tool sends no claim for it
 * (under a flood of another tool's creates, such a node claimed once per batch of them, each
 * claim empty and, under owner limits, in PostgreSQL's claim lock).
 */
export function changeOf(record: TaskRecord, kind: TaskChangeKind): TaskChange {
  const { taskId, status, version } = record;
  return kind === "queued"
    ? { taskId, kind, status, version, toolName: record.request.toolName }
    : { taskId, kind, status, version };
}
