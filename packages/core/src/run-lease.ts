/**
 * Keeping a run's lease: renewing it while the handler runs (with quick retries through a
 * store outage), stopping the run when it runs out unrenewed, and retrying the run's own
 * writes through an outage for as long as the lease holds. And the run's deadline.
 */

import { isTaskError } from "./errors.js";
import type { RunWriter } from "./run-writer.js";

/** The longest wait between two tries of a run's write while the store is unavailable. */
const MAX_OUTAGE_RETRY_MS = 1_000;

/** The lease a run keeps. */
export interface LeaseTerms {
  /** How long the lease lasts from each renewal. */
  readonly leaseMs: number;
  readonly renewEveryMs: number;
  /** First wait before a write is tried again while the store is unavailable. */
  readonly retryMs: number;
  /** Whether the store leases tasks (a queue store); without, there is no lease to keep. */
  readonly leased: boolean;
}

/** What the lease keeper needs from its run. */
export interface LeaseHolder {
  /** True once the run's outcome is decided: the lease need not be kept any more. */
  outcomeDecided(): boolean;
  /** The lease ran out while no renewal could get through: the run must stop. */
  leaseExpired(): void;
  /** A renewal found the task no longer held by this run (ended elsewhere, or taken over). */
  leaseLost(): void;
  reportError(error: unknown): void;
}

/** One run's lease. */
export class RunLease {
  readonly #terms: LeaseTerms;
  readonly #writer: RunWriter;
  readonly #holder: LeaseHolder;
  /**
   * Until when (`performance.now()` time) the run holds its lease as far as it knows: from
   * its start, then from each renewal that succeeded (counted from when it was sent).
   */
  #heldUntil: number;
  /** A renewal is in flight. */
  #renewing = false;
  /** The last renewal failed because the store could not be reached (none got through since). */
  #renewFailing = false;
  /** The wait before the next try of a renewal the store could not take. */
  #renewRetryMs: number;
  #renewalTimer: NodeJS.Timeout | undefined;
  #leaseEndTimer: NodeJS.Timeout | undefined;

  constructor(terms: LeaseTerms, writer: RunWriter, holder: LeaseHolder) {
    this.#terms = terms;
    this.#writer = writer;
    this.#holder = holder;
    this.#heldUntil = performance.now() + terms.leaseMs;
    this.#renewRetryMs = terms.retryMs;
  }

  /** Starts renewing the lease and watching for its end (a leased store only). */
  start(): void {
    if (!this.#terms.leased) return;
    this.#renewalTimer = setInterval(() => this.#renew(), this.#terms.renewEveryMs);
    this.#renewalTimer.unref();
    this.#armLeaseEnd(Math.max(0, this.#heldUntil - performance.now()));
  }

  /** Stops renewing (the handler has returned). */
  stop(): void {
    if (this.#renewalTimer !== undefined) clearInterval(this.#renewalTimer);
    if (this.#leaseEndTimer !== undefined) clearTimeout(this.#leaseEndTimer);
  }

  /**
   * Renews the lease once. A store that cannot be reached is tried again soon, with backoff
   * (not only at the next interval), so a blip shorter than the lease costs nothing.
   */
  #renew(): void {
    if (this.#holder.outcomeDecided() || this.#renewing) return;
    this.#renewing = true;
    const sentAt = performance.now();
    const { leaseMs, retryMs, renewEveryMs } = this.#terms;
    this.#writer.renewLease(leaseMs).then(
      (held) => {
        this.#renewing = false;
        if (held) {
          this.#heldUntil = Math.max(this.#heldUntil, sentAt + leaseMs);
          this.#renewRetryMs = retryMs;
          this.#renewFailing = false;
        } else if (!this.#holder.outcomeDecided()) {
          this.#holder.leaseLost();
        }
      },
      (error) => {
        this.#renewing = false;
        this.#holder.reportError(error);
        if (!isTaskError(error, "store_unavailable") || this.#holder.outcomeDecided()) return;
        this.#renewFailing = true;
        if (performance.now() >= this.#heldUntil) {
          this.#holder.leaseExpired();
          return;
        }
        const wait = Math.min(this.#renewRetryMs, renewEveryMs);
        this.#renewRetryMs = Math.min(this.#renewRetryMs * 2, MAX_OUTAGE_RETRY_MS);
        setTimeout(() => this.#renew(), wait).unref();
      },
    );
  }

  /**
   * Stops the run when its lease runs out because renewals could not get through (the
   * store stayed unavailable, or this node lost its link to it): another node may recover
   * the task by then, so the handler must not go on (its outcome would be fenced out
   * anyway). The task is left to orphan recovery, which applies its retry policy. A lease
   * that ran out with no outage in sight (this process stalled: SIGSTOP, a blocked event
   * loop) is renewed at once instead: the store then says whether another run took over.
   */
  #armLeaseEnd(ms: number): void {
    this.#leaseEndTimer = setTimeout(() => {
      if (this.#holder.outcomeDecided()) return;
      const left = this.#heldUntil - performance.now();
      if (left > 0) this.#armLeaseEnd(left);
      else if (this.#renewFailing) this.#holder.leaseExpired();
      else {
        this.#renew();
        this.#armLeaseEnd(Math.max(1, this.#terms.retryMs));
      }
    }, ms);
    this.#leaseEndTimer.unref();
  }

  /**
   * One write the handler asked for (a status message, input requests), tried again with
   * backoff while the store is unavailable: for as long as the run holds its lease (a
   * store without leases: for a lease's length from now). When the lease runs out first the
   * run has stopped, and the write rejects with the reason `signal` carries.
   */
  async keepTrying<T>(write: () => Promise<T>, signal: AbortSignal): Promise<T> {
    const { leased, leaseMs } = this.#terms;
    const until = leased
      ? () => this.#heldUntil
      : (
          (end) => () =>
            end
        )(performance.now() + leaseMs);
    let delay = this.#terms.retryMs;
    for (;;) {
      try {
        return await write();
      } catch (error) {
        if (!isTaskError(error, "store_unavailable")) throw error;
        // Cancelled or stopped meanwhile: the handler hears that, not the outage.
        signal.throwIfAborted();
        const left = until() - performance.now();
        if (left <= 0) {
          if (!leased) throw error;
          this.#holder.leaseExpired();
          signal.throwIfAborted();
        }
        await pause(Math.min(delay, Math.max(left, 1)), signal);
        delay = Math.min(delay * 2, MAX_OUTAGE_RETRY_MS);
      }
    }
  }
}

/**
 * Calls `passed` once `deadlineMs` from now (no timer without a deadline): past it the run
 * is over whatever its handler does.
 */
export function armDeadline(
  deadlineMs: number | null,
  passed: () => void,
): NodeJS.Timeout | undefined {
  if (deadlineMs === null) return undefined;
  const timer = setTimeout(passed, deadlineMs);
  timer.unref();
  return timer;
}

/** Waits `ms`, or until `signal` aborts (resolving either way: the caller checks). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
