/**
 * Storing a run's outcome: the write is tried again while the store is unavailable, and an
 * outcome the store refuses because the run no longer holds the task is dropped.
 */

import { isTaskError } from "./errors.js";
import { retryBackoffOf } from "./retry-policy.js";
import type { Run } from "./run.js";
import type { OutcomeStore } from "./run-collaborators.js";
import type { OutcomeWrite } from "./run-outcome.js";
import { RunStoppedError } from "./run-stop.js";

/** The longest wait between two tries of an outcome write. */
const MAX_SETTLE_RETRY_MS = 5_000;

/** How an {@link OutcomeSettler} tries and reports. */
export interface OutcomeSettlerOptions {
  /** Tries of one outcome write while the store is unavailable. */
  readonly attempts: number;
  /** First wait between two tries, doubled each time up to 5 s. */
  readonly retryMs: number;
  /** Told about outcomes that could not be stored. */
  onError(error: unknown, taskId: string): void;
  /** A run requeued its task for another attempt that waits out `backoffMs` first. */
  requeuedWithBackoff(backoffMs: number): void;
}

/** Stores the outcomes of a runner's runs. */
export class OutcomeSettler implements OutcomeStore {
  readonly #o: OutcomeSettlerOptions;

  constructor(options: OutcomeSettlerOptions) {
    this.#o = options;
  }

  async store(run: Run, write: OutcomeWrite): Promise<void> {
    const { taskId } = run;
    let delay = this.#o.retryMs;
    for (let attempt = 1; ; attempt++) {
      try {
        const written = await write();
        // Requeued for another attempt after a backoff: claim it when the backoff ends.
        const backoffMs = retryBackoffOf(written);
        if (backoffMs !== null) this.#o.requeuedWithBackoff(backoffMs);
        return;
      } catch (error) {
        // Someone else ended the task first (an immediate cancel, or the task was removed),
        // or another run took it over: the late outcome is discarded, never written over.
        if (isTaskError(error, "invalid_transition")) return;
        if (isTaskError(error, "not_found_or_unauthorized")) return;
        if (isTaskError(error, "lease_lost")) {
          // This run only: a later attempt of the task may be running here meanwhile.
          run.abort(new RunStoppedError(taskId, "superseded"));
          return;
        }
        if (!isTaskError(error, "store_unavailable") || attempt >= this.#o.attempts) {
          this.#o.onError(error, taskId);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, MAX_SETTLE_RETRY_MS);
      }
    }
  }
}
