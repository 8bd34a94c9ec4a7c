import { isTerminal, type OwnerLimits, type TaskRecord } from "@mcp-tasks/core";
import { countedRunning, type NewTask, underOwnerLimits } from "@mcp-tasks/core/store";

/** One owner's running tasks: queued (no holder), held and working, held and waiting for input. */
export interface QueueUse {
  queued: number;
  working: number;
  waiting: number;
}

/**
 * Each owner's running tasks by queue state, kept as tasks move, so the per-owner limits
 * of `create` and `claim` cost O(1) instead of a count over the owner's tasks.
 */
export interface QueueUsage {
  /** By owner key; owners with no running task are left out. */
  readonly queueUse: Map<string, QueueUse>;
}

/** Where a task stands in the queue, for {@link QueueUse}; `null` when it is finished. */
export function queueState(record: TaskRecord): keyof QueueUse | null {
  if (isTerminal(record.status)) return null;
  if (record.execution.holder === null) return "queued";
  return record.status === "input_required" ? "waiting" : "working";
}

/** Moves one task of the owner from one queue state to another. */
export function countUse(
  usage: QueueUsage,
  key: string,
  from: keyof QueueUse | null,
  to: keyof QueueUse | null,
): void {
  let use = usage.queueUse.get(key);
  if (use === undefined) {
    use = { queued: 0, working: 0, waiting: 0 };
    usage.queueUse.set(key, use);
  }
  if (from !== null) use[from]--;
  if (to !== null) use[to]++;
  if (use.queued === 0 && use.working === 0 && use.waiting === 0) usage.queueUse.delete(key);
}

/** An owner's running tasks as the limits count them. */
export function runningOf(usage: QueueUsage, key: string, limits: OwnerLimits): number {
  const use = usage.queueUse.get(key);
  return use === undefined ? 0 : countedRunning(use.working, use.waiting, limits);
}

/**
 * The new task as the owner's limits admit it (core's `underOwnerLimits`): queued, with a
 * message saying why, when the owner is at its running limit or tasks are queued ahead.
 */
export function admitUnderOwnerLimits(usage: QueueUsage, task: NewTask, key: string): NewTask {
  const use = usage.queueUse.get(key);
  return underOwnerLimits(
    task,
    countedRunning(use?.working ?? 0, use?.waiting ?? 0, task.ownerLimits ?? {}),
    use?.queued ?? 0,
  );
}
