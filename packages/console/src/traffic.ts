import type { Clock } from "@mcp-tasks/core";

/**
 * Request counts since the server started (cumulative), per protocol era and per client:
 * what the operator's traffic panel is drawn from. The demo hands over its request metrics.
 */
export interface TrafficCounts {
  /** Requests per era, e.g. `{"2026-07-28": 120, "2025-11-25": 4}`. */
  readonly eras: Readonly<Record<string, number>>;
  /** Requests per era and client name. */
  readonly clients: readonly {
    readonly era: string;
    readonly client: string;
    readonly requests: number;
  }[];
}

/** Reads the current counts; the console calls it every sample interval. */
export type TrafficProvider = () => TrafficCounts | Promise<TrafficCounts>;

/** Requests in one sample interval. */
export interface TrafficPoint {
  /** End of the interval, ISO 8601. */
  readonly at: string;
  readonly eras: Readonly<Record<string, number>>;
  /** By `"<client> (<era>)"`. */
  readonly clients: Readonly<Record<string, number>>;
}

/** What the traffic panel draws: requests per interval, oldest first, plus totals. */
export interface TrafficSeries {
  readonly sampleMs: number;
  readonly points: readonly TrafficPoint[];
  /** Cumulative counts at the latest sample. */
  readonly totals: TrafficCounts | null;
}

interface Sample {
  readonly at: number;
  readonly eras: ReadonlyMap<string, number>;
  readonly clients: ReadonlyMap<string, number>;
  readonly counts: TrafficCounts;
}

/** Most distinct client series kept in one point (the busiest; the rest add up to "other"). */
const MAX_CLIENT_SERIES = 12;

function clean(n: unknown): number {
  return typeof n === "number" && Number.isFinite(n) && n >= 0 ? n : 0;
}

/**
 * Samples the provider periodically (the timer never keeps the process alive) and keeps the
 * last `keep` samples, so the panel shows requests per era and per client over time.
 */
export class TrafficSampler {
  readonly #provider: TrafficProvider;
  readonly #clock: Clock;
  readonly #keep: number;
  readonly sampleMs: number;
  readonly #samples: Sample[] = [];
  readonly #timer: NodeJS.Timeout;
  readonly #onSample: (series: TrafficSeries) => void;
  #sampling = false;

  constructor(
    provider: TrafficProvider,
    options: { clock: Clock; sampleMs: number; keep: number },
    onSample: (series: TrafficSeries) => void,
  ) {
    this.#provider = provider;
    this.#clock = options.clock;
    this.#keep = Math.max(2, options.keep);
    this.sampleMs = options.sampleMs;
    this.#onSample = onSample;
    this.#timer = setInterval(() => void this.sample(), options.sampleMs);
    this.#timer.unref();
    void this.sample();
  }

  /** Takes one sample now (also run by the timer). */
  async sample(): Promise<void> {
    if (this.#sampling) return;
    this.#sampling = true;
    try {
      const counts = await this.#provider();
      const eras = new Map<string, number>();
      for (const [era, n] of Object.entries(counts.eras ?? {})) eras.set(era, clean(n));
      const clients = new Map<string, number>();
      for (const c of counts.clients ?? []) {
        const key = `${String(c.client)} (${String(c.era)})`;
        clients.set(key, (clients.get(key) ?? 0) + clean(c.requests));
      }
      this.#samples.push({ at: this.#clock.now(), eras, clients, counts });
      if (this.#samples.length > this.#keep) this.#samples.shift();
      this.#onSample(this.series());
    } catch {
      // A provider that fails leaves a gap; the next sample tries again.
    } finally {
      this.#sampling = false;
    }
  }

  /** Requests per interval between consecutive samples. */
  series(): TrafficSeries {
    const s = this.#samples;
    const latest = s[s.length - 1];
    const busiest = latest
      ? new Set(
          [...latest.clients]
            .sort((a, b) => b[1] - a[1])
            .slice(0, MAX_CLIENT_SERIES)
            .map(([k]) => k),
        )
      : new Set<string>();
    const points: TrafficPoint[] = [];
    for (let i = 1; i < s.length; i++) {
      const prev = s[i - 1]!;
      const cur = s[i]!;
      const eras: Record<string, number> = {};
      for (const [era, n] of cur.eras) eras[era] = Math.max(0, n - (prev.eras.get(era) ?? 0));
      const clients: Record<string, number> = {};
      for (const [key, n] of cur.clients) {
        const delta = Math.max(0, n - (prev.clients.get(key) ?? 0));
        const name = busiest.has(key) ? key : "other";
        clients[name] = (clients[name] ?? 0) + delta;
      }
      points.push({ at: new Date(cur.at).toISOString(), eras, clients });
    }
    return { sampleMs: this.sampleMs, points, totals: latest?.counts ?? null };
  }

  close(): void {
    clearInterval(this.#timer);
  }
}
