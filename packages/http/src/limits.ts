import type { Owner } from "@mcp-tasks/core";
import { ownerKey } from "@mcp-tasks/core/store";
import { type Refusal, refusal } from "./refusals.js";

/**
 * Per-owner limits of the edge, so that no owner can starve another of what a node holds
 * for its callers. Each is counted per owner (`ownerKey`); **anonymous callers share one
 * budget** (they cannot be told apart reliably: a client address is shared behind proxies
 * and NAT, and cheap to vary on IPv6). `0` turns a limit off.
 */
export interface OwnerLimitsOptions {
  /** 2025-11-25 sessions one owner holds open at once; default 100. */
  readonly maxSessionsPerOwner?: number;
  /** Open 2026-07-28 `subscriptions/listen` task streams per owner; default 16. */
  readonly maxListenStreamsPerOwner?: number;
  /** Task ids subscribed across one owner's open listen streams; default 1 000. */
  readonly maxSubscribedTasksPerOwner?: number;
  /** Blocking 2025-11-25 `tasks/result` waits per owner; default 32. */
  readonly maxResultWaitsPerOwner?: number;
  /**
   * Requests per second per owner (a token bucket refilled at this rate); default 0, off.
   * Every HTTP request of the endpoint counts, polls included.
   */
  readonly requestsPerSecond?: number;
  /** The bucket's size: requests an owner may send at once; default twice the rate (≥ 1). */
  readonly requestBurst?: number;
  /**
   * The `Retry-After` of the held-resource limits (sessions, streams, waits): they free up
   * when the owner's own ones end, which the server cannot predict; default 1 000 ms.
   */
  readonly retryAfterMs?: number;
}

/** The defaults of {@link OwnerLimitsOptions}, for documentation and start-up lines. */
export const DEFAULT_OWNER_LIMITS = Object.freeze({
  maxSessionsPerOwner: 100,
  maxListenStreamsPerOwner: 16,
  maxSubscribedTasksPerOwner: 1000,
  maxResultWaitsPerOwner: 32,
  requestsPerSecond: 0,
  retryAfterMs: 1000,
});

/** Owners whose rate bucket is remembered; past it, full buckets are forgotten first. */
const MAX_BUCKETS = 10_000;

type Held = "sessions" | "streams" | "subscribed" | "waits";

/** Gives back what an acquisition took; idempotent. */
export type Release = () => void;

/** What a request that holds nothing gives back: nothing (the fronts skip it). */
export const NO_HOLD: Release = () => {};

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * The counters behind {@link OwnerLimitsOptions}: what each owner holds now, and each
 * owner's request bucket. Every acquisition is synchronous, so concurrent requests of one
 * owner can never together pass a limit.
 */
export class OwnerLimits {
  readonly #max: Readonly<Record<Held, number>>;
  readonly #rate: number;
  readonly #burst: number;
  readonly #retryAfterMs: number;
  readonly #now: () => number;
  readonly #held = new Map<string, Record<Held, number>>();
  readonly #buckets = new Map<string, Bucket>();

  constructor(options: OwnerLimitsOptions = {}, now: () => number = Date.now) {
    const d = DEFAULT_OWNER_LIMITS;
    this.#max = {
      sessions: options.maxSessionsPerOwner ?? d.maxSessionsPerOwner,
      streams: options.maxListenStreamsPerOwner ?? d.maxListenStreamsPerOwner,
      subscribed: options.maxSubscribedTasksPerOwner ?? d.maxSubscribedTasksPerOwner,
      waits: options.maxResultWaitsPerOwner ?? d.maxResultWaitsPerOwner,
    };
    for (const [name, value] of Object.entries(this.#max)) checkCount(name, value);
    this.#rate = options.requestsPerSecond ?? d.requestsPerSecond;
    if (!(this.#rate >= 0) || !Number.isFinite(this.#rate)) {
      throw new TypeError(`requestsPerSecond must be a finite number ≥ 0, got ${this.#rate}`);
    }
    this.#burst = Math.max(1, options.requestBurst ?? Math.ceil(this.#rate * 2));
    this.#retryAfterMs = options.retryAfterMs ?? d.retryAfterMs;
    this.#now = now;
  }

  /** Takes one request from the owner's bucket; the refusal when it is empty. */
  takeRequest(owner: Owner): Refusal | undefined {
    if (this.#rate <= 0) return undefined;
    const key = ownerKey(owner);
    const now = this.#now();
    let bucket = this.#buckets.get(key);
    if (bucket === undefined) {
      if (this.#buckets.size >= MAX_BUCKETS) this.#forgetFullBuckets(now);
      bucket = { tokens: this.#burst, at: now };
      this.#buckets.set(key, bucket);
    } else {
      bucket.tokens = Math.min(
        this.#burst,
        bucket.tokens + ((now - bucket.at) / 1000) * this.#rate,
      );
      bucket.at = now;
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return undefined;
    }
    const retryAfterMs = Math.ceil(((1 - bucket.tokens) / this.#rate) * 1000);
    return refusal("rate-limited", { retryAfterMs, limit: this.#rate });
  }

  /** Holds one 2025-11-25 session slot for the owner, or the refusal. */
  openSession(owner: Owner): Release | Refusal {
    return this.#acquire(owner, [["sessions", 1]], "too-many-sessions");
  }

  /** Holds one listen stream on `taskCount` task ids for the owner, or the refusal. */
  openListen(owner: Owner, taskCount: number): Release | Refusal {
    return this.#acquire(
      owner,
      [
        ["streams", 1],
        ["subscribed", taskCount],
      ],
      undefined,
    );
  }

  /** Holds `count` blocking `tasks/result` waits for the owner, or the refusal. */
  openWaits(owner: Owner, count: number): Release | Refusal {
    if (count === 0) return NO_HOLD;
    return this.#acquire(owner, [["waits", count]], "too-many-waits");
  }

  /** What the owner holds now (for tests and diagnostics). */
  heldBy(owner: Owner): Readonly<Record<Held, number>> {
    return { ...(this.#held.get(ownerKey(owner)) ?? zero()) };
  }

  #acquire(
    owner: Owner,
    wants: readonly (readonly [Held, number])[],
    kind: "too-many-sessions" | "too-many-waits" | undefined,
  ): Release | Refusal {
    const key = ownerKey(owner);
    const held = this.#held.get(key) ?? zero();
    for (const [what, count] of wants) {
      const max = this.#max[what];
      if (max > 0 && held[what] + count > max) {
        const refusedAs =
          kind ?? (what === "streams" ? "too-many-streams" : "too-many-subscriptions");
        return refusal(refusedAs, { retryAfterMs: this.#retryAfterMs, limit: max });
      }
    }
    for (const [what, count] of wants) held[what] += count;
    this.#held.set(key, held);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const [what, count] of wants) held[what] -= count;
      if (held.sessions + held.streams + held.subscribed + held.waits === 0) {
        if (this.#held.get(key) === held) this.#held.delete(key);
      }
    };
  }

  #forgetFullBuckets(now: number): void {
    for (const [key, bucket] of this.#buckets) {
      if (bucket.tokens + ((now - bucket.at) / 1000) * this.#rate >= this.#burst) {
        this.#buckets.delete(key);
      }
    }
    // Still full (every owner busy): forget the oldest, who then starts with a full bucket.
    if (this.#buckets.size >= MAX_BUCKETS) {
      const oldest = this.#buckets.keys().next();
      if (!oldest.done) this.#buckets.delete(oldest.value);
    }
  }
}

function zero(): Record<Held, number> {
  return { sessions: 0, streams: 0, subscribed: 0, waits: 0 };
}

function checkCount(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(`the ${name} limit must be a whole number ≥ 0 (0: off), got ${value}`);
  }
}

/** Whether an acquisition was refused. */
export function isLimitRefusal(value: Release | Refusal): value is Refusal {
  return typeof value !== "function";
}
