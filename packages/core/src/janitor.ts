/** What one janitor pass did. */
export interface JanitorSweep {
  /** Expired tasks deleted. */
  readonly removed: number;
  /** Orphaned running tasks put back in the queue for another attempt. */
  readonly requeued: number;
  /** Orphaned running tasks failed "Worker lost" (no attempt left). */
  readonly orphaned: number;
  /** Set when the pass failed (e.g. the database was unreachable); the next pass retries. */
  readonly error?: unknown;
}

/** What a janitor sweeps: a {@link TaskService} (or a store, which has the same two calls). */
export interface Sweepable {
  cleanupExpired(options?: { limit?: number }): Promise<number>;
  /** Absent for stores that are no task queue. */
  recoverOrphans?(options?: { limit?: number }): Promise<{ requeued: number; failed: number }>;
}

/** Settings of {@link startJanitor}. */
export interface JanitorOptions {
  /** Time between passes; default 60 000 ms. */
  readonly intervalMs?: number;
  /** Most tasks deleted (and most orphans failed) per pass; default 1 000. */
  readonly batch?: number;
  /** Also recover orphaned tasks (queue stores only); default true. */
  readonly recoverOrphans?: boolean;
  /** Called after each pass. */
  readonly onSweep?: (sweep: JanitorSweep) => void;
}

/**
 * Runs `cleanupExpired` (and `recoverOrphans`) every `intervalMs` in bounded batches, for any
 * store. Several nodes may run one each: the contract makes both calls safe to run
 * concurrently. The timer never keeps the process alive, and a pass never overlaps the
 * previous one. Returns a stop function that resolves once a pass in progress has finished.
 *
 * @example
 * ```ts
 * const stop = startJanitor(service, { intervalMs: 30_000 });
 * // on shutdown:
 * await stop();
 * ```
 */
export function startJanitor(target: Sweepable, options: JanitorOptions = {}): () => Promise<void> {
  const batch = options.batch ?? 1_000;
  const withOrphans = options.recoverOrphans ?? true;
  let running: Promise<void> | null = null;
  const pass = async () => {
    let removed = 0;
    let requeued = 0;
    let orphaned = 0;
    try {
      removed = await target.cleanupExpired({ limit: batch });
      if (withOrphans && target.recoverOrphans !== undefined) {
        const sweep = await target.recoverOrphans({ limit: batch });
        requeued = sweep.requeued;
        orphaned = sweep.failed;
      }
      options.onSweep?.({ removed, requeued, orphaned });
    } catch (error) {
      options.onSweep?.({ removed, requeued, orphaned, error });
    }
  };
  const timer = setInterval(() => {
    if (running !== null) return;
    running = pass().finally(() => {
      running = null;
    });
  }, options.intervalMs ?? 60_000);
  timer.unref();
  return async () => {
    clearInterval(timer);
    if (running !== null) await running;
  };
}
