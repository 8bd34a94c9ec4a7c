import type { Registry } from "prom-client";

/** Settings of a {@link LatencyHistogram}. */
export interface LatencyHistogramOptions {
  readonly name: string;
  readonly help: string;
  /** The label that tells series apart, e.g. `op`. */
  readonly keyLabel: string;
  /** Labels every series carries, e.g. `{ store: "memory" }`. */
  readonly constLabels: Readonly<Record<string, string>>;
  /** Upper bounds in seconds, ascending. */
  readonly buckets: readonly number[];
  readonly registry: Registry;
}

/** One sample line, in the shape prom-client's registry renders. */
interface Sample {
  readonly metricName: string;
  readonly labels: Readonly<Record<string, string | number>>;
  readonly value: number;
}

/** What the registry reads from a metric when rendering it. */
interface Rendered {
  readonly name: string;
  readonly help: string;
  readonly type: "histogram";
  readonly aggregator: "sum";
  readonly values: readonly Sample[];
}

interface Series {
  /** Observations per bucket (not cumulative); the last slot is `+Inf`. */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * A Prometheus histogram for a hot path: one series per key (a closed set, e.g. store
 * operations), observed with an array index and three additions. prom-client's `Histogram`
 * validates and hashes the label object on every `observe`, which tripled the cost of a
 * store call on the memory store; this one renders the same exposition format through the
 * same registry.
 */
export class LatencyHistogram<K extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly #keyLabel: string;
  readonly #constLabels: Readonly<Record<string, string>>;
  readonly #bounds: readonly number[];
  readonly #series = new Map<K, Series>();

  constructor(options: LatencyHistogramOptions) {
    this.name = options.name;
    this.help = options.help;
    this.#keyLabel = options.keyLabel;
    this.#constLabels = options.constLabels;
    this.#bounds = [...options.buckets].sort((a, b) => a - b);
    // The registry only reads name, help, type and get() (and calls reset()).
    options.registry.registerMetric(this as unknown as Parameters<Registry["registerMetric"]>[0]);
  }

  /** Records one observation of `seconds` for `key`. */
  observe(key: K, seconds: number): void {
    let series = this.#series.get(key);
    if (series === undefined) {
      series = { counts: new Float64Array(this.#bounds.length + 1), sum: 0, count: 0 };
      this.#series.set(key, series);
    }
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && seconds > (bounds[i] as number)) i++;
    series.counts[i] = (series.counts[i] ?? 0) + 1;
    series.sum += seconds;
    series.count += 1;
  }

  /** The samples, in prom-client's shape. */
  get(): Promise<Rendered> {
    const values: Sample[] = [];
    for (const [key, series] of this.#series) {
      const labels = { [this.#keyLabel]: key, ...this.#constLabels };
      let cumulative = 0;
      for (let i = 0; i <= this.#bounds.length; i++) {
        cumulative += series.counts[i] ?? 0;
        const le = i < this.#bounds.length ? (this.#bounds[i] as number) : "+Inf";
        values.push({
          metricName: `${this.name}_bucket`,
          labels: { le, ...labels },
          value: cumulative,
        });
      }
      values.push({ metricName: `${this.name}_sum`, labels, value: series.sum });
      values.push({ metricName: `${this.name}_count`, labels, value: series.count });
    }
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values,
    });
  }

  /** Forgets every observation (`registry.resetMetrics()`). */
  reset(): void {
    this.#series.clear();
  }
}
