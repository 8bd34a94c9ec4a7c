import { isTaskError, taskErrors } from "./errors.js";
import type { TaskChange, TaskChangeListener, Unsubscribe } from "./store.js";
import type { TaskRecord } from "./task.js";
import { isTerminal } from "./transitions.js";

/** How {@link TaskService.follow} follows a task. Everything is optional. */
export interface FollowOptions {
  /** Stops following: the iteration throws `signal.reason`. */
  readonly signal?: AbortSignal;
  /**
   * Which changes warrant a re-read; default every change. A runner that only cares about
   * cancellation and answers skips the reads its own status messages would cause.
   */
  readonly wakeOn?: (change: TaskChange) => boolean;
  /**
   * Start from a record the caller already holds: it is not read again nor yielded, and
   * only later versions are. Without it the current record is read and yielded first.
   */
  readonly after?: TaskRecord;
  /**
   * Re-read this often even when no change arrives, in case a notification was lost (e.g.
   * across a database reconnect). Default the service's `waitRecheckMs`; 0 disables.
   */
  readonly recheckMs?: number;
}

/** What {@link followTask} works on: one owner-scoped read and the task's change feed. */
export interface FollowSource {
  read(): Promise<TaskRecord>;
  watch(listener: TaskChangeListener): Unsubscribe;
}

/** The first delay before re-reading through `store_unavailable`, doubled up to the cap. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2_000;

/**
 * The one "watch, then re-read" loop: yields the task's records as they change, each
 * version at most once and in increasing order. A burst of changes during a read costs
 * one more read, not one per change. It ends after yielding a terminal record; throws
 * `not_found_or_unauthorized` when the task is gone (deleted, expired or never the
 * caller's), `signal.reason` when aborted, and any non-transient error. Through
 * `store_unavailable` it keeps retrying (100 ms doubling to 2 s, or sooner on a change), so
 * a brief database outage delays what it yields but never ends it.
 */
export async function* followTask(
  source: FollowSource,
  options: FollowOptions & { readonly recheckMs: number },
): AsyncGenerator<TaskRecord, void, undefined> {
  const { signal, wakeOn, after, recheckMs } = options;
  signal?.throwIfAborted();
  if (after !== undefined && isTerminal(after.status)) return;
  let seen = after?.version ?? -1;
  // Whether something may have changed since the last read.
  let dirty = after === undefined;
  let wake: (() => void) | undefined;
  const poke = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  // Subscribe before the first read, so no change can fall between the two.
  const unsubscribe = source.watch((change) => {
    if (wakeOn !== undefined && !wakeOn(change)) return;
    dirty = true;
    poke();
  });
  signal?.addEventListener("abort", poke);
  let retryMs = RETRY_FIRST_MS;
  try {
    for (;;) {
      signal?.throwIfAborted();
      if (dirty) {
        dirty = false;
        let record: TaskRecord;
        try {
          record = await source.read();
        } catch (error) {
          if (!isTaskError(error, "store_unavailable")) throw error;
          dirty = true;
          await sleep(retryMs, (w) => {
            wake = w;
          });
          retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
          continue;
        }
        retryMs = RETRY_FIRST_MS;
        if (record.version > seen) {
          seen = record.version;
          yield record;
          if (isTerminal(record.status)) return;
        }
        continue;
      }
      await sleep(recheckMs, (w) => {
        wake = w;
      });
      // Woken by the timer or by a change: either way, read again.
      dirty = true;
    }
  } finally {
    wake = undefined;
    unsubscribe();
    signal?.removeEventListener("abort", poke);
  }
}

/** Waits `ms` (forever when 0), or until the installed waker is called. */
function sleep(ms: number, install: (wake: () => void) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    install(() => {
      if (timer !== undefined) clearTimeout(timer);
      resolve();
    });
    if (ms > 0) {
      timer = setTimeout(resolve, ms);
      timer.unref();
    }
  });
}

/**
 * The first of a task's `records` for which `predicate` holds (see `TaskService.waitFor`);
 * `invalid_transition` when they end (the task ended) without it holding.
 */
export async function firstMatching(
  taskId: string,
  records: AsyncIterable<TaskRecord>,
  predicate: (task: TaskRecord) => boolean,
): Promise<TaskRecord> {
  let last: TaskRecord | undefined;
  for await (const task of records) {
    if (predicate(task)) return task;
    last = task;
  }
  throw taskErrors.invalidTransition(taskId, last?.status ?? "unknown", "wait for");
}
