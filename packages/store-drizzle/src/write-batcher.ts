/*
 * Group commit for writes of one kind (and the same grouping for gets, see `get-batching.ts`):
 * the writes submitted during one event-loop turn leave together as one statement, so a
 * burst of them (a claimed batch of tasks finishing at once, say) costs the database one
 * statement, one commit and one round trip instead of one each.
 * At most `maxInFlight` batches are out at once; what arrives meanwhile waits for the next.
 * A lone write waits one turn (`setImmediate`) at most, so nothing is added at low load,
 * and under load the batches grow by themselves as the statements take longer.
 */

import { isTaskError } from "@mcp-tasks/core";
import { taskErrors } from "@mcp-tasks/core/store";

/**
 * The settings of the store's batchers: a failed batch is sent again one write at a time
 * only when the database answered (refused it), not when it is unreachable; and, like any
 * statement, a write waits for PostgreSQL at most `timeoutMs`, also behind slow batches.
 * `what` names the write in the timeout's error ("a create", "an outcome").
 */
export function storeWriteOptions(what: string, timeoutMs: number): WriteBatcherOptions {
  return {
    isolate: (error) => !isTaskError(error, "store_unavailable"),
    maxQueuedMs: timeoutMs,
    expired: () =>
      taskErrors.storeUnavailable(
        `${what} waited more than ${timeoutMs} ms for PostgreSQL to take it`,
      ),
  };
}

/** Settings of a {@link WriteBatcher}. */
export interface WriteBatcherOptions {
  /** Most writes in one statement; default 64. */
  readonly maxBatch?: number;
  /** Most batch statements in flight; default 2. */
  readonly maxInFlight?: number;
  /**
   * Whether a failed batch of several is sent again one write at a time, so that one write
   * the database refuses does not fail the others; default always. A store says no for a
   * failure that would only repeat (the database is unreachable).
   */
  readonly isolate?: (error: unknown) => boolean;
  /**
   * Longest a write may wait in the queue (behind batches in flight that the database is
   * slow to answer); one that waited longer is not sent but fails with `expired()`. Default
   * unlimited.
   */
  readonly maxQueuedMs?: number;
  /** The error a write that waited too long fails with. */
  readonly expired?: () => unknown;
}

interface Pending<I, R> {
  readonly item: I;
  /** When it was queued (`performance.now()`). */
  readonly at: number;
  readonly resolve: (result: R) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Collects items and sends them in batches through `send`, which answers each item in
 * order (`results[i]` is `items[i]`'s).
 */
export class WriteBatcher<I, R> {
  readonly #send: (items: readonly I[]) => Promise<readonly R[]>;
  readonly #maxBatch: number;
  readonly #maxInFlight: number;
  readonly #isolate: (error: unknown) => boolean;
  readonly #maxQueuedMs: number;
  readonly #expired: () => unknown;
  #queue: Pending<I, R>[] = [];
  #scheduled = false;
  readonly #inFlight = new Set<Promise<void>>();
  /** Statements sent, for tests and benchmarks. */
  batches = 0;

  constructor(send: (items: readonly I[]) => Promise<readonly R[]>, options: WriteBatcherOptions) {
    this.#send = send;
    this.#maxBatch = Math.max(1, options.maxBatch ?? 64);
    this.#maxInFlight = Math.max(1, options.maxInFlight ?? 2);
    this.#isolate = options.isolate ?? (() => true);
    this.#maxQueuedMs = options.maxQueuedMs ?? Number.POSITIVE_INFINITY;
    this.#expired = options.expired ?? (() => new Error("the write waited too long to be sent"));
  }

  /** Queues `item` for the next batch; resolves with its own result. */
  submit(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ item, at: performance.now(), resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        // The end of this turn: the writes completing in it join the batch.
        setImmediate(() => {
          this.#scheduled = false;
          this.#flush();
        });
      }
    });
  }

  /**
   * Whether a batch leaves by the end of this turn: writes wait, and a batch may go out (see
   * {@link #flush}, which a queued write has scheduled or a returning batch runs).
   */
  sendsSoon(): boolean {
    return this.#queue.length > 0 && this.#inFlight.size < this.#maxInFlight;
  }

  /** Resolves once every batch sent so far has been answered. */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all(this.#inFlight);
  }

  #flush(): void {
    this.#dropExpired();
    while (this.#queue.length > 0 && this.#inFlight.size < this.#maxInFlight) {
      const batch = this.#queue.splice(0, this.#maxBatch);
      const sent = this.#sendBatch(batch).finally(() => {
        this.#inFlight.delete(sent);
        // A batch came back: what queued meanwhile goes now.
        this.#flush();
      });
      this.#inFlight.add(sent);
    }
  }

  /** Fails the writes that have waited longer than `maxQueuedMs` (the oldest come first). */
  #dropExpired(): void {
    const oldest = performance.now() - this.#maxQueuedMs;
    let n = 0;
    while (n < this.#queue.length && (this.#queue[n] as Pending<I, R>).at < oldest) n++;
    for (const p of this.#queue.splice(0, n)) p.reject(this.#expired());
  }

  async #sendBatch(batch: readonly Pending<I, R>[]): Promise<void> {
    this.batches++;
    let results: readonly R[];
    try {
      results = await this.#send(batch.map((p) => p.item));
    } catch (error) {
      if (batch.length > 1 && this.#isolate(error)) {
        await Promise.all(batch.map((p) => this.#sendBatch([p])));
      } else {
        for (const p of batch) p.reject(error);
      }
      return;
    }
    batch.forEach((p, i) => {
      p.resolve(results[i] as R);
    });
  }
}
