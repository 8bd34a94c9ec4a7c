import { Counter, type Registry } from "prom-client";

/** The protocol eras the demo tells apart. */
export type Era = "2026-07-28" | "2025-11-25";

/** Both eras, newest first. */
export const ERAS: readonly Era[] = Object.freeze(["2026-07-28", "2025-11-25"]);

/** Longest client name kept as a label value; longer ones are cut. */
const MAX_NAME = 128;

/** A client name as a label value: trimmed, bounded, `unknown` when absent. */
export function clientLabel(name: unknown): string {
  if (typeof name !== "string") return "unknown";
  const trimmed = name.trim();
  if (trimmed.length === 0) return "unknown";
  return trimmed.length > MAX_NAME ? trimmed.slice(0, MAX_NAME) : trimmed;
}

/** Requests of one era in one time bucket (see {@link TrafficSnapshot.history}). */
export interface TrafficBucket {
  /** Start of the bucket, ms since the epoch. */
  readonly startMs: number;
  readonly requests: Readonly<Record<Era, number>>;
}

/**
 * Plain data for a traffic view (the web console's migration panel): request counts since
 * the node started, per era and per client, and per era over recent time buckets.
 */
export interface TrafficSnapshot {
  /** When the snapshot was taken, ms since the epoch. */
  readonly atMs: number;
  /** Width of each {@link history} bucket in ms. */
  readonly bucketMs: number;
  /** Requests per era since the node started. */
  readonly eras: Readonly<Record<Era, number>>;
  /** Requests per era and client name since the node started, most requests first. */
  readonly clients: readonly {
    readonly era: Era;
    readonly client: string;
    readonly requests: number;
  }[];
  /**
   * Requests per era in consecutive buckets, oldest first, ending with the current one;
   * buckets without requests are included as zeros so the series has no gaps.
   */
  readonly history: readonly TrafficBucket[];
}

/** Settings of {@link RequestMetrics}. */
export interface RequestMetricsOptions {
  /** The registry the counter is registered in (one per app, never the global one). */
  readonly registry: Registry;
  /** Distinct client names kept as labels; later names count as `other`. Default 1000. */
  readonly maxClients?: number;
  /**
   * Distinct client names one owner may add to the labels (anonymous callers are one
   * owner); its further new names count as `other`, so that one owner's junk names cannot
   * use up `maxClients` for everyone. Default 20.
   */
  readonly maxClientsPerOwner?: number;
  /** 2025-11-25 sessions whose client name is remembered; default 10 000. */
  readonly maxSessions?: number;
  /** Width of a traffic history bucket; default one minute. */
  readonly bucketMs?: number;
  /** Traffic history buckets kept; default 60. */
  readonly maxBuckets?: number;
  /** The clock; default `Date.now`. */
  readonly now?: () => number;
}

/**
 * `mcp_requests_total{era, client}` plus the 2025-11-25 session → client name map (a legacy
 * client names itself only in `initialize`). Both are bounded: past `maxClients` distinct
 * names new ones count as `other`, past `maxSessions` the oldest session is forgotten (its
 * later requests count as `unknown`). A copy of the counts is kept in plain maps so that
 * {@link trafficSnapshot} and {@link get} are synchronous.
 */
export class RequestMetrics {
  /**
   * Per era, per client label: the count, so a request neither hashes labels in prom-client
   * nor builds a key string; the counter is set from these at scrape time. Bounded like the
   * labels themselves (`maxClients` names plus `other` and `unknown`, per era).
   */
  readonly #counts = new Map<Era, Map<string, ClientCount>>();
  /** The same entries in the order they were first counted (the series order on scrape). */
  readonly #entries: ClientCount[] = [];
  readonly #sessions = new Map<string, string>();
  readonly #clientNames = new Set<string>();
  /** How many names each owner (by owner key) added to {@link #clientNames}. */
  readonly #addedBy = new Map<string, number>();
  readonly #maxClientsPerOwner: number;
  readonly #history: { startMs: number; requests: Record<Era, number> }[] = [];
  readonly #maxClients: number;
  readonly #maxSessions: number;
  readonly #bucketMs: number;
  readonly #maxBuckets: number;
  readonly #now: () => number;

  constructor(options: RequestMetricsOptions) {
    this.#maxClients = options.maxClients ?? 1000;
    this.#maxClientsPerOwner = options.maxClientsPerOwner ?? 20;
    this.#maxSessions = options.maxSessions ?? 10_000;
    this.#bucketMs = options.bucketMs ?? 60_000;
    this.#maxBuckets = options.maxBuckets ?? 60;
    this.#now = options.now ?? Date.now;
    const entries = this.#entries;
    // Registered in `registry`; nothing else holds it.
    new Counter({
      name: "mcp_requests_total",
      help: "MCP HTTP requests served, by protocol era and client name.",
      labelNames: ["era", "client"],
      registers: [options.registry],
      // Counted in plain maps per request; published here, absolute, when scraped.
      collect() {
        this.reset();
        for (const { era, client, requests } of entries) this.inc({ era, client }, requests);
      },
    });
  }

  /**
   * Counts one request of `era` from client `name` (already a label value) sent by the
   * owner with key `owner` (see `ownerKey`; default the anonymous owner's).
   */
  count(era: Era, name: string, owner = ""): void {
    const client = this.#admit(name, owner);
    let perClient = this.#counts.get(era);
    if (perClient === undefined) {
      perClient = new Map();
      this.#counts.set(era, perClient);
    }
    let entry = perClient.get(client);
    if (entry === undefined) {
      entry = { era, client, requests: 0 };
      perClient.set(client, entry);
      this.#entries.push(entry);
    }
    entry.requests += 1;
    this.#bucket(this.#now()).requests[era] += 1;
  }

  /** The label `name` is counted under: itself once admitted, else `other`. */
  labelOf(name: string): string {
    return this.#clientNames.has(name) ? name : "other";
  }

  /** `name` as a label: admitted while the owner and the whole set are under their caps. */
  #admit(name: string, owner: string): string {
    if (this.#clientNames.has(name)) return name;
    const added = this.#addedBy.get(owner) ?? 0;
    if (this.#clientNames.size >= this.#maxClients || added >= this.#maxClientsPerOwner) {
      return "other";
    }
    this.#clientNames.add(name);
    this.#addedBy.set(owner, added + 1);
    return name;
  }

  /** Remembers which client a 2025-11-25 session belongs to. */
  bindSession(sessionId: string, name: string): void {
    if (this.#sessions.size >= this.#maxSessions && !this.#sessions.has(sessionId)) {
      const oldest = this.#sessions.keys().next();
      if (!oldest.done) this.#sessions.delete(oldest.value);
    }
    this.#sessions.set(sessionId, name);
  }

  /** The client name of a 2025-11-25 session, or `unknown`. */
  sessionClient(sessionId: string | null): string {
    return (sessionId !== null && this.#sessions.get(sessionId)) || "unknown";
  }

  /** Forgets a closed session. */
  endSession(sessionId: string): void {
    this.#sessions.delete(sessionId);
  }

  /** The counter value for one era and client label. */
  get(era: Era, name: string): number {
    return this.#counts.get(era)?.get(name)?.requests ?? 0;
  }

  /** See {@link TrafficSnapshot}. */
  trafficSnapshot(): TrafficSnapshot {
    const atMs = this.#now();
    const eras = zeroEras();
    const clients: { era: Era; client: string; requests: number }[] = [];
    for (const { era, client, requests } of this.#entries) {
      eras[era] += requests;
      clients.push({ era, client, requests });
    }
    clients.sort((a, b) => b.requests - a.requests || (a.client < b.client ? -1 : 1));
    return { atMs, bucketMs: this.#bucketMs, eras, clients, history: this.#series(atMs) };
  }

  /** The bucket `atMs` falls in, opening it (and dropping the oldest) when new. */
  #bucket(atMs: number) {
    const startMs = atMs - (atMs % this.#bucketMs);
    const last = this.#history.at(-1);
    // A clock that went backwards counts into the newest bucket rather than reordering.
    if (last !== undefined && last.startMs >= startMs) return last;
    const bucket = { startMs, requests: zeroEras() };
    this.#history.push(bucket);
    if (this.#history.length > this.#maxBuckets) this.#history.shift();
    return bucket;
  }

  /** The last `maxBuckets` buckets up to `atMs`, gaps filled with zeros. */
  #series(atMs: number): TrafficBucket[] {
    const end = atMs - (atMs % this.#bucketMs);
    const start = end - (this.#maxBuckets - 1) * this.#bucketMs;
    const byStart = new Map(this.#history.map((b) => [b.startMs, b.requests]));
    const first = this.#history.find((b) => b.startMs >= start)?.startMs ?? end;
    const out: TrafficBucket[] = [];
    for (let t = Math.max(first, start); t <= end; t += this.#bucketMs) {
      out.push({ startMs: t, requests: { ...(byStart.get(t) ?? zeroEras()) } });
    }
    return out;
  }
}

/** One (era, client) label pair and its count. */
interface ClientCount {
  readonly era: Era;
  readonly client: string;
  requests: number;
}

function zeroEras(): Record<Era, number> {
  return { "2026-07-28": 0, "2025-11-25": 0 };
}
