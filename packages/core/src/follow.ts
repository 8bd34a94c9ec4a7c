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

/** What {@link subscribeToTask} tells its subscriber. */
export interface TaskSubscriber {
  /**
   * A newer version of the task. A returned promise holds the next read back until it
   * settles (the subscriber is not ready for more); nothing is read for it meanwhile.
   */
  record(task: TaskRecord): void | Promise<void>;
  /**
   * The subscription ended by itself: after the terminal record (`failed` false), or with
   * a non-transient error such as `not_found_or_unauthorized`. Never called once the
   * subscription was stopped, nor synchronously from {@link subscribeToTask}.
   */
  end(failed: boolean, error?: unknown): void;
}

/**
 * The one "watch, then re-read" loop, told through callbacks: the task's records as they
 * change, each version at most once and in increasing order. A burst of changes during a
 * read costs one more read, not one per change. It ends after the terminal record, or
 * with `not_found_or_unauthorized` when the task is gone (deleted, expired or never the
 * caller's), or with any non-transient error. Through `store_unavailable` it keeps retrying
 * (100 ms doubling to 2 s, or sooner on a change), so a brief database outage delays what
 * it tells but never ends it. Without a signal, promise or generator of its own, a run pays
 * little to watch its task (see `Run`); {@link followTask} is this loop as an iterable.
 * Returns what stops it.
 */
export function subscribeToTask(
  source: FollowSource,
  options: Omit<FollowOptions, "signal"> & { readonly recheckMs: number },
  subscriber: TaskSubscriber,
): Unsubscribe {
  const { wakeOn, after, recheckMs } = options;
  if (after !== undefined && isTerminal(after.status)) {
    let stopped = false;
    queueMicrotask(() => {
      if (!stopped) subscriber.end(false);
    });
    return () => {
      stopped = true;
    };
  }
  let seen = after?.version ?? -1;
  // Whether something may have changed since the last read.
  let dirty = after === undefined;
  let reading = false;
  let stopped = false;
  let retryMs = RETRY_FIRST_MS;
  // The recheck timer, or the retry timer while `retrying`.
  let timer: NodeJS.Timeout | undefined;
  let retrying = false;

  const arm = (ms: number, retry: boolean) => {
    retrying = retry;
    if (ms <= 0) return;
    timer = setTimeout(onTimer, ms);
    timer.unref();
  };
  const disarm = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    retrying = false;
  };
  const stop = () => {
    if (stopped) return;
    stopped = true;
    unsubscribe();
    disarm();
  };
  const readIfDirty = () => {
    if (stopped || reading || !dirty || retrying) return;
    dirty = false;
    reading = true;
    disarm();
    source.read().then(onRecord, onError);
  };
  const settled = () => {
    reading = false;
    if (stopped) return;
    if (dirty) readIfDirty();
    else arm(recheckMs, false);
  };
  function onTimer(): void {
    timer = undefined;
    retrying = false;
    // The recheck or the retry: either way, read again.
    dirty = true;
    readIfDirty();
  }
  function onRecord(record: TaskRecord): void {
    if (stopped) return;
    retryMs = RETRY_FIRST_MS;
    if (record.version <= seen) {
      settled();
      return;
    }
    seen = record.version;
    if (isTerminal(record.status)) {
      stop();
      void subscriber.record(record);
      subscriber.end(false);
      return;
    }
    const held = subscriber.record(record);
    if (held === undefined) settled();
    else held.then(settled, settled);
  }
  function onError(error: unknown): void {
    reading = false;
    if (stopped) return;
    if (!isTaskError(error, "store_unavailable")) {
      stop();
      subscriber.end(true, error);
      return;
    }
    dirty = true;
    arm(retryMs, true);
    retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
  }
  // Subscribe before the first read, so no change can fall between the two.
  const unsubscribe = source.watch((change) => {
    if (stopped || (wakeOn !== undefined && !wakeOn(change))) return;
    dirty = true;
    // A change ends a retry's wait early; it does not interrupt a read in flight.
    if (retrying) disarm();
    readIfDirty();
  });
  if (dirty) readIfDirty();
  else arm(recheckMs, false);
  return stop;
}

/**
 * {@link subscribeToTask} as an async iterable: yields the task's records as they change
 * (the next read waits until the consumer asks for more), ends after yielding a terminal
 * record; throws `not_found_or_unauthorized` when the task is gone, `signal.reason` when
 * aborted, and any non-transient error. Through `store_unavailable` it keeps retrying.
 */
export async function* followTask(
  source: FollowSource,
  options: FollowOptions & { readonly recheckMs: number },
): AsyncGenerator<TaskRecord, void, undefined> {
  const { signal } = options;
  signal?.throwIfAborted();
  type Told =
    | { readonly record: TaskRecord; readonly taken: () => void }
    | { readonly ended: true; readonly failed: boolean; readonly error: unknown };
  const told: Told[] = [];
  let wake: (() => void) | undefined;
  const poke = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const unsubscribe = subscribeToTask(source, options, {
    record: (record) =>
      new Promise<void>((taken) => {
        told.push({ record, taken });
        poke();
      }),
    end: (failed, error) => {
      told.push({ ended: true, failed, error });
      poke();
    },
  });
  signal?.addEventListener("abort", poke);
  try {
    for (;;) {
      signal?.throwIfAborted();
      const next = told.shift();
      if (next === undefined) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        continue;
      }
      if ("ended" in next) {
        if (next.failed) throw next.error;
        return;
      }
      yield next.record;
      next.taken();
    }
  } finally {
    wake = undefined;
    unsubscribe();
    signal?.removeEventListener("abort", poke);
  }
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
