import type { Registry } from "prom-client";

/*
 * Prometheus counters and histograms for hot paths: every store call and every task's
 * creation and end. prom-client's `Counter` and `Histogram` validate and hash the label
 * object on every `inc` / `observe`, which tripled the cost of a store call on the memory
 * store and was 4 % of a task-creating `tools/call` there; these find their series by one
 * string key made of the label values in a fixed order, and render the same exposition format
 * through the same registry (which reads `name`, `help`, `type`, `aggregator` and `get()`,
 * and calls `reset()`). Labels render in the order of `labelNames`, then the constant ones.
 */

/** One sample line, in the shape prom-client's registry renders. */
interface Sample {
  readonly metricName?: string;
  readonly labels: Readonly<Record<string, string | number>>;
  readonly value: number;
}

/** What the registry reads from a metric when rendering it. */
interface Rendered {
  readonly name: string;
  readonly help: string;
  readonly type: "counter" | "histogram";
  readonly aggregator: "sum";
  readonly values: readonly Sample[];
}

/** Settings shared by {@link LabelledCounter} and {@link LabelledHistogram}. */
export interface LabelledMetricOptions<L extends string> {
  readonly name: string;
  readonly help: string;
  /** The labels that tell series apart, e.g. `["status", "tool"]`; values must be bounded. */
  readonly labelNames: readonly L[];
  /** Labels every series carries, e.g. `{ store: "memory" }`. */
  readonly constLabels?: Readonly<Record<string, string>>;
  readonly registry: Registry;
}

/** The series of one metric by their label values. */
class SeriesTable<L extends string, S> {
  readonly #labelNames: readonly L[];
  readonly #constLabels: Readonly<Record<string, string>>;
  readonly #make: () => S;
  readonly #series = new Map<string, { readonly labels: Record<string, string>; readonly s: S }>();

  constructor(
    labelNames: readonly L[],
    constLabels: Readonly<Record<string, string>>,
    make: () => S,
  ) {
    this.#labelNames = labelNames;
    this.#constLabels = constLabels;
    this.#make = make;
  }

  /** The series of `labels` (made at its first use). */
  of(labels: Readonly<Record<L, string>>): S {
    const names = this.#labelNames;
    let key = "";
    for (let i = 0; i < names.length; i++) key += `${labels[names[i] as L]}\u0000`;
    let entry = this.#series.get(key);
    if (entry === undefined) {
      const own: Record<string, string> = {};
      for (const name of names) own[name] = labels[name];
      entry = { labels: { ...own, ...this.#constLabels }, s: this.#make() };
      this.#series.set(key, entry);
    }
    return entry.s;
  }

  /** Each series with its labels (the constant ones included). */
  entries(): Iterable<{ readonly labels: Record<string, string>; readonly s: S }> {
    return this.#series.values();
  }

  clear(): void {
    this.#series.clear();
  }
}

/** What a counter and a histogram share: their series, their rendering, their reset. */
abstract class LabelledMetric<L extends string, S> {
  readonly name: string;
  readonly help: string;
  abstract readonly type: Rendered["type"];
  readonly aggregator = "sum";
  protected readonly table: SeriesTable<L, S>;

  constructor(options: LabelledMetricOptions<L>, make: () => S) {
    this.name = options.name;
    this.help = options.help;
    this.table = new SeriesTable(options.labelNames, options.constLabels ?? {}, make);
    options.registry.registerMetric(this as unknown as Parameters<Registry["registerMetric"]>[0]);
  }

  /** One series' samples, pushed onto `values`. */
  protected abstract render(labels: Record<string, string>, series: S, values: Sample[]): void;

  /** The samples, in prom-client's shape. */
  get(): Promise<Rendered> {
    const values: Sample[] = [];
    for (const { labels, s } of this.table.entries()) this.render(labels, s, values);
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values,
    });
  }

  /** Forgets every series (`registry.resetMetrics()`). */
  reset(): void {
    this.table.clear();
  }
}

/** A Prometheus counter for a hot path; see the top of this file. */
export class LabelledCounter<L extends string> extends LabelledMetric<L, { value: number }> {
  readonly type = "counter";

  constructor(options: LabelledMetricOptions<L>) {
    super(options, () => ({ value: 0 }));
  }

  /** Adds `by` (default 1) to the series of `labels`. */
  inc(labels: Readonly<Record<L, string>>, by = 1): void {
    this.table.of(labels).value += by;
  }

  protected render(labels: Record<string, string>, series: { value: number }, values: Sample[]) {
    values.push({ labels, value: series.value });
  }
}

/** Settings of a {@link LabelledHistogram}. */
export interface LabelledHistogramOptions<L extends string> extends LabelledMetricOptions<L> {
  /** Upper bounds in seconds, ascending. */
  readonly buckets: readonly number[];
}

interface Buckets {
  /** Observations per bucket (not cumulative); the last slot is `+Inf`. */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * A Prometheus histogram for a hot path (see the top of this file): one observation is a
 * series lookup, a bucket search and three additions.
 */
export class LabelledHistogram<L extends string> extends LabelledMetric<L, Buckets> {
  readonly type = "histogram";
  readonly #bounds: readonly number[];

  constructor(options: LabelledHistogramOptions<L>) {
    const bounds = [...options.buckets].sort((a, b) => a - b);
    super(options, () => ({ counts: new Float64Array(bounds.length + 1), sum: 0, count: 0 }));
    this.#bounds = bounds;
  }

  /** Records one observation of `seconds` in the series of `labels`. */
  observe(labels: Readonly<Record<L, string>>, seconds: number): void {
    const series = this.table.of(labels);
    const bounds = this.#bounds;
    let i = 0;
    while (i < bounds.length && seconds > (bounds[i] as number)) i++;
    series.counts[i] = (series.counts[i] ?? 0) + 1;
    series.sum += seconds;
    series.count += 1;
  }

  protected render(labels: Record<string, string>, series: Buckets, values: Sample[]) {
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
}
