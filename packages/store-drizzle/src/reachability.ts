/**
 * Fail-fast while PostgreSQL refuses connections.
 *
 * postgres.js queues a statement until one of its connections is up. While the server
 * refuses connections, each connect attempt fails at once but takes only one queued
 * statement with it, so a burst of statements queues behind the reconnecting pool and waits
 * up to the store's operation timeout (10 s by default). Once a connect was refused, and
 * until a statement succeeds again, one statement at a time is let through to the driver as
 * a probe; the others fail at once as unreachable, without entering the driver's queue (so a
 * write the caller was told failed never runs later). The probe reconnects the pool when the
 * server is back, and its success ends the fail-fast spell by itself. A probe the driver
 * leaves unanswered for longer than the store's operation timeout (its caller has failed by
 * then) no longer holds the others back: the next statement goes as a new probe, so a lost
 * driver promise cannot keep the store failing for good.
 */

/** Codes that mean a connection could not be opened at all (not: an open one was lost). */
const REFUSAL_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "CONNECT_TIMEOUT",
  // cannot_connect_now: the server is starting up or shutting down.
  "57P03",
]);

/** The code of the error a statement fails with when it was not sent while connects are refused. */
export const UNREACHABLE_CODE = "DATABASE_UNREACHABLE";

/** Tracks whether the database refused connections lately, and fails fast while it does. */
export class Reachability {
  readonly #probeTimeoutMs: number;
  /** True between a refused connect and the next statement that succeeds. */
  #refusing = false;
  /** The probe out, if any: a token of its own, so a late one cannot clear its successor. */
  #probe: object | null = null;

  /** @param probeTimeoutMs How long a probe holds the others back at most (the operation timeout). */
  constructor(probeTimeoutMs: number) {
    this.#probeTimeoutMs = probeTimeoutMs;
  }

  /** Runs the statement `start` starts, unless connects are refused and a probe is out. */
  async run<T>(start: () => PromiseLike<T>): Promise<T> {
    if (!this.#refusing) return this.#watch(start());
    if (this.#probe !== null) {
      throw Object.assign(
        new Error("PostgreSQL refused connections; waiting for a reconnect attempt to succeed"),
        { code: UNREACHABLE_CODE },
      );
    }
    const probe = {};
    this.#probe = probe;
    const release = () => {
      if (this.#probe === probe) this.#probe = null;
    };
    const abandon = setTimeout(release, this.#probeTimeoutMs);
    abandon.unref?.();
    try {
      return await this.#watch(start());
    } finally {
      clearTimeout(abandon);
      release();
    }
  }

  async #watch<T>(statement: PromiseLike<T>): Promise<T> {
    try {
      const result = await statement;
      this.#refusing = false;
      return result;
    } catch (error) {
      if (REFUSAL_CODES.has(String((error as { code?: unknown } | null)?.code))) {
        this.#refusing = true;
      }
      throw error;
    }
  }
}

/**
 * The pause before a postgres.js connection retries after a failed connect, in seconds:
 * postgres.js's default grows to 20 s, so a statement handed to a connection in that pause
 * outwaits the operation timeout, and the pool is slow to notice the server is back. This
 * one grows from 10 ms to at most 0.2 s (with jitter), so a refused probe fails within about
 * that long.
 * Connects are only retried for a waiting statement (or the LISTEN connection), and while
 * connects are refused {@link Reachability} lets one statement at a time through, so the
 * retries stay a handful per second.
 */
export function connectBackoffSeconds(retries: number): number {
  return (0.5 + Math.random() / 2) * Math.min(0.01 * 2 ** retries, 0.2);
}
