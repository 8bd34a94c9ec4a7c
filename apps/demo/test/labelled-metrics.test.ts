import { Counter, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { LabelledCounter, LabelledHistogram } from "../src/labelled-metrics.js";

// The labelled metrics stand in for prom-client's on hot paths: a scrape must not tell them
// apart (labels given in the order of `labelNames`: prom-client renders them in the order
// of the first observation's object, these always in that order).
describe("labelled metrics", () => {
  const BUCKETS = [0.005, 0.05, 0.5, 1];
  const observations: [{ status: string; tool: string }, number][] = [
    [{ status: "completed", tool: "a" }, 0.004],
    [{ status: "completed", tool: "a" }, 0.7],
    [{ status: "failed", tool: "b" }, 12],
    [{ status: "completed", tool: "a" }, 0.05],
    [{ status: "cancelled", tool: "other" }, 0],
  ];

  it("render what prom-client's counter and histogram render for the same observations", async () => {
    const theirs = new Registry();
    const counter = new Counter({
      name: "x_total",
      help: "X.",
      labelNames: ["status", "tool"],
      registers: [theirs],
    });
    const histogram = new Histogram({
      name: "x_seconds",
      help: "X time.",
      labelNames: ["status", "tool"],
      buckets: BUCKETS,
      registers: [theirs],
    });
    const ours = new Registry();
    const labelledCounter = new LabelledCounter({
      name: "x_total",
      help: "X.",
      labelNames: ["status", "tool"],
      registry: ours,
    });
    const labelledHistogram = new LabelledHistogram({
      name: "x_seconds",
      help: "X time.",
      labelNames: ["status", "tool"],
      buckets: BUCKETS,
      registry: ours,
    });
    for (const [labels, seconds] of observations) {
      counter.inc(labels);
      labelledCounter.inc(labels);
      histogram.observe(labels, seconds);
      labelledHistogram.observe(labels, seconds);
    }
    counter.inc({ status: "failed", tool: "b" }, 3);
    labelledCounter.inc({ status: "failed", tool: "b" }, 3);
    const rendered = await ours.metrics();
    expect(rendered).toContain('x_total{status="failed",tool="b"} 4');
    expect(rendered).toContain('x_seconds_bucket{le="0.05",status="completed",tool="a"} 2');
    expect(rendered).toBe(await theirs.metrics());

    theirs.resetMetrics();
    ours.resetMetrics();
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it("carry the constant labels on every series", async () => {
    const registry = new Registry();
    const histogram = new LabelledHistogram({
      name: "op_seconds",
      help: "Op.",
      labelNames: ["op"],
      constLabels: { store: "memory" },
      buckets: [0.001],
      registry,
    });
    histogram.observe({ op: "create" }, 0.002);
    const rendered = await registry.metrics();
    expect(rendered).toContain('op_seconds_bucket{le="0.001",op="create",store="memory"} 0');
    expect(rendered).toContain('op_seconds_bucket{le="+Inf",op="create",store="memory"} 1');
    expect(rendered).toContain('op_seconds_count{op="create",store="memory"} 1');
  });
});
