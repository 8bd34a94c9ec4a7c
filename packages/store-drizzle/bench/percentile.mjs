// What the store's benchmarks report of their latency samples.

/** The `p` quantile (0 to 1) of `sorted` (ascending), by nearest rank. */
export function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}
