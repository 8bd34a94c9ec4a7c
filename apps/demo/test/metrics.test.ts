import { ManualClock, owner, TaskService, type TaskStore } from "@mcp-tasks/core";
import { supportsQueue } from "@mcp-tasks/core/store";
import { createPGliteTaskStore, createPostgresTaskStore, migrate } from "@mcp-tasks/store-drizzle";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { register as globalRegistry, Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STORE_OPERATIONS } from "../src/instrumented-store.js";
import { clientLabel, DemoMetrics, RequestMetrics } from "../src/metrics.js";
import { connectLegacy } from "./helpers/legacy-client.js";
import { DATABASE_URL, dropSchema, schemaName } from "./helpers/process.js";
import { ALICE, startDemo, startDualDemo } from "./helpers/server.js";
import { pollTask, rpc } from "./helpers/wire.js";

/** One sample line of the text exposition format, label values unescaped. */
interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Parses a scrape; throws on a line that is neither a comment nor a sample. */
function parse(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const unescapeLabel = (v: string) => v.replace(/\\(["\\n])/g, (_, c) => (c === "n" ? "\n" : c));
  for (const row of text.trimEnd().split("\n")) {
    const type = /^# TYPE (\w+) (counter|gauge|histogram|summary)$/.exec(row);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (row === "" || row.startsWith("# HELP ")) continue; // prom-client separates metrics
    // prom-client writes NaN (an empty event-loop histogram) as `Nan`; parsers accept any case.
    const m = /^(\w+)(?:\{(.*)\})? (-?[\d.e+-]+|[+-]Inf|NaN)$/i.exec(row);
    if (!m) throw new Error(`not a sample line: ${JSON.stringify(row)}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1]!] = unescapeLabel(l[2]!);
    }
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { samples, types };
}

/** The value of the sample with this name and (at least) these labels; undefined if none. */
function sampleValue(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  return samples.find(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  )?.value;
}

async function scrape(url: string) {
  const response = await fetch(url.replace(/\/mcp$/, "/metrics"));
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/plain; version=0.0.4");
  const text = await response.text();
  return { text, ...parse(text) };
}

/** Scrapes until `done` holds for the samples (bounded: the feed delivers within moments). */
async function scrapeUntil(
  url: string,
  done: (value: (name: string, labels?: Record<string, string>) => number | undefined) => boolean,
): Promise<Sample[]> {
  for (let i = 0; i < 200; i++) {
    const { samples } = await scrape(url);
    if (done((name, labels) => sampleValue(samples, name, labels))) return samples;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error("the metrics never reached the expected state");
}

const asAlice = { token: ALICE };
const named = (name: string) => ({
  _meta: { "io.modelcontextprotocol/clientInfo": { name, version: "1" } },
});

describe("/metrics", () => {
  let server: Awaited<ReturnType<typeof startDualDemo>>;

  beforeAll(async () => {
    server = await startDualDemo();
  });
  afterAll(async () => {
    await server.stop();
  });

  it("counts requests per era and client name under the names dashboards use", async () => {
    // 2026-07-28: the name comes from _meta["io.modelcontextprotocol/clientInfo"].
    for (let i = 0; i < 3; i++) {
      await rpc(
        server.url,
        "tools/call",
        { name: "greet", arguments: { name: "Ada" }, ...named("modern-app") },
        asAlice,
      );
    }
    const weird = 'we"ird\\name\nline2';
    await rpc(server.url, "tools/list", named(weird), asAlice);
    await rpc(
      server.url,
      "tools/list",
      { _meta: { "io.modelcontextprotocol/clientInfo": { version: "1" } } },
      asAlice,
    );

    // 2025-11-25: the name comes from the session's initialize clientInfo.
    const legacy = await connectLegacy(server.url, ALICE, "legacy-app");
    try {
      const execution = await legacy.session.callTool(
        "slow_compute",
        { seconds: 0 },
        { task: { preference: "require" } },
      );
      expect((await execution.settle()).outcome.status).toBe("completed");
      // 2025-11-25 cancellation is immediate.
      const report = await legacy.session.callTool(
        "generate_report",
        { topic: "legacy", sections: 20 },
        { task: { preference: "require" } },
      );
      await report.cancel();
      expect((await report.settle()).outcome.status).toBe("cancelled");
      const open = await scrape(server.url);
      expect(sampleValue(open.samples, "mcp_legacy_sessions")).toBe(1);
    } finally {
      await legacy.close();
    }
    // A legacy request outside any session has no name.
    const orphan = await fetch(server.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    await orphan.body?.cancel();

    const { text, samples, types } = await scrape(server.url);
    expect(types.get("mcp_requests_total")).toBe("counter");
    expect(types.get("mcp_legacy_sessions")).toBe("gauge");
    const requests = (era: string, client: string) =>
      sampleValue(samples, "mcp_requests_total", { era, client });
    expect(requests("2026-07-28", "modern-app")).toBe(3);
    expect(requests("2026-07-28", weird)).toBe(1);
    expect(text).toContain('client="we\\"ird\\\\name\\nline2"');
    expect(requests("2026-07-28", "unknown")).toBe(1);
    // initialize, notifications/initialized, tools/list, tools/call, tasks/get…, DELETE
    expect(requests("2025-11-25", "legacy-app")).toBeGreaterThanOrEqual(4);
    expect(requests("2025-11-25", "unknown")).toBe(1);
    // The legacy task, counted under its era and tool.
    expect(
      sampleValue(samples, "mcp_tasks_created_total", { era: "2025-11-25", tool: "slow_compute" }),
    ).toBe(1);
    expect(
      sampleValue(samples, "mcp_tasks_finished_total", {
        status: "completed",
        tool: "slow_compute",
      }),
    ).toBe(1);
    expect(
      sampleValue(samples, "mcp_tasks_cancellations_total", {
        era: "2025-11-25",
        tool: "generate_report",
        mode: "immediate",
      }),
    ).toBe(1);
    expect(
      sampleValue(samples, "mcp_tasks_finished_total", {
        status: "cancelled",
        tool: "generate_report",
      }),
    ).toBe(1);

    // The same counts as plain data, for the console's traffic panel.
    const traffic = server.app.metrics.trafficSnapshot();
    expect(traffic.clients).toContainEqual({
      era: "2026-07-28",
      client: "modern-app",
      requests: 3,
    });
    const modernTotal = samples
      .filter((s) => s.name === "mcp_requests_total" && s.labels.era === "2026-07-28")
      .reduce((sum, s) => sum + s.value, 0);
    expect(traffic.eras["2026-07-28"]).toBe(modernTotal);
    const inHistory = traffic.history.reduce((sum, b) => sum + b.requests["2025-11-25"], 0);
    expect(inHistory).toBe(traffic.eras["2025-11-25"]);
  });

  it("follows tasks through creation, input, cancellation and the store", async () => {
    // An input round, answered: confirm_delete completes.
    const asked = await rpc(
      server.url,
      "tools/call",
      { name: "confirm_delete", arguments: { filename: "a.txt" } },
      asAlice,
    );
    const askedId = asked.body?.result?.taskId as string;
    await pollTask(server.url, askedId, ALICE, (t) => t.status === "input_required");
    await rpc(
      server.url,
      "tasks/update",
      {
        taskId: askedId,
        inputResponses: { confirm: { action: "accept", content: { confirm: true } } },
      },
      asAlice,
    );
    expect((await pollTask(server.url, askedId, ALICE)).status).toBe("completed");

    // A cooperative cancellation of a running report.
    const report = await rpc(
      server.url,
      "tools/call",
      { name: "generate_report", arguments: { topic: "x", sections: 20 } },
      asAlice,
    );
    const reportId = report.body?.result?.taskId as string;
    await pollTask(server.url, reportId, ALICE, (t) =>
      String(t.statusMessage ?? "").startsWith("Writing section 2"),
    );
    const { samples: during } = await scrape(server.url);
    expect(sampleValue(during, "mcp_tasks_running", { status: "working" })).toBe(1);
    await rpc(server.url, "tasks/cancel", { taskId: reportId }, asAlice);
    expect((await pollTask(server.url, reportId, ALICE)).status).toBe("cancelled");

    // A store error: reading a task that does not exist.
    const missing = await rpc(server.url, "tasks/get", { taskId: "no-such-task" }, asAlice);
    expect(missing.body?.error).toBeDefined();

    const { samples, types } = await scrape(server.url);
    const v = (name: string, labels: Record<string, string> = {}) =>
      sampleValue(samples, name, labels);
    const modern = "2026-07-28";
    expect(v("mcp_tasks_created_total", { era: modern, tool: "confirm_delete" })).toBe(1);
    expect(v("mcp_tasks_created_total", { era: modern, tool: "generate_report" })).toBe(1);
    expect(v("mcp_tasks_input_rounds_total", { tool: "confirm_delete" })).toBe(1);
    expect(v("mcp_tasks_finished_total", { status: "completed", tool: "confirm_delete" })).toBe(1);
    // Two reports cancelled: the 2025-11-25 one above, and this one.
    expect(v("mcp_tasks_finished_total", { status: "cancelled", tool: "generate_report" })).toBe(2);
    expect(
      v("mcp_tasks_cancellations_total", {
        era: modern,
        tool: "generate_report",
        mode: "cooperative",
      }),
    ).toBe(1);
    // Nothing runs any more, nothing waits in the queue.
    expect(v("mcp_tasks_running", { status: "working" })).toBe(0);
    expect(v("mcp_tasks_running", { status: "input_required" })).toBe(0);
    expect(v("mcp_tasks_queue_depth")).toBe(0);

    // Histograms: every finished task has a duration; tasks created claimed waited 0 s.
    expect(types.get("mcp_tasks_duration_seconds")).toBe("histogram");
    expect(types.get("mcp_tasks_time_to_first_claim_seconds")).toBe("histogram");
    expect(types.get("mcp_store_operation_duration_seconds")).toBe("histogram");
    expect(
      v("mcp_tasks_duration_seconds_count", { status: "cancelled", tool: "generate_report" }),
    ).toBe(2);
    expect(
      v("mcp_tasks_duration_seconds_bucket", {
        le: "+Inf",
        status: "completed",
        tool: "confirm_delete",
      }),
    ).toBe(1);
    expect(v("mcp_tasks_time_to_first_claim_seconds_count", { tool: "generate_report" })).toBe(2);
    expect(
      v("mcp_tasks_time_to_first_claim_seconds_bucket", { le: "0.005", tool: "generate_report" }),
    ).toBe(2);
    // slow_compute and generate_report (2025-11-25), confirm_delete and generate_report
    // (2026-07-28); greet runs without a task.
    expect(v("mcp_store_operation_duration_seconds_count", { op: "create", store: "memory" })).toBe(
      4,
    );
    expect(
      v("mcp_store_errors_total", {
        op: "get",
        store: "memory",
        code: "not_found_or_unauthorized",
      }),
    ).toBeGreaterThanOrEqual(1);

    // The runner's metrics keep their names (values: see durable.test.ts).
    expect(types.get("mcp_tasks_claims_total")).toBe("counter");
    expect(types.get("mcp_tasks_runs_started_total")).toBe("counter");
    expect(types.get("mcp_tasks_runs_superseded_total")).toBe("counter");
    expect(types.get("mcp_tasks_runs_handed_back_total")).toBe("counter");
    expect(types.get("mcp_tasks_runs_running")).toBe("gauge");
    expect(v("mcp_tasks_runs_started_total")).toBe(4);
    expect(v("mcp_tasks_runs_handed_back_total")).toBe(0);

    // Node's default process metrics, in the same registry.
    for (const name of [
      "process_cpu_user_seconds_total",
      "process_resident_memory_bytes",
      "nodejs_heap_size_used_bytes",
      "nodejs_eventloop_lag_seconds",
    ]) {
      expect(v(name), name).toBeGreaterThanOrEqual(0);
    }
    // …and nothing in prom-client's global registry.
    expect(globalRegistry.getSingleMetric("mcp_requests_total")).toBeUndefined();
  });
});

/** Two stores on one queue: the same memory store, or two connections to one schema. */
const sharedStores = {
  memory: async () => {
    const store = new MemoryTaskStore({ sweepIntervalMs: 0 });
    return { open: async () => store, label: "memory", drop: async () => {} };
  },
  postgres: async () => {
    const schema = schemaName("metrics");
    await migrate(DATABASE_URL, { schema });
    return {
      open: () => createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 2 }),
      label: "postgres",
      drop: () => dropSchema(schema),
    };
  },
};

describe.each(Object.keys(sharedStores) as (keyof typeof sharedStores)[])(
  "/metrics across nodes sharing one queue (%s)",
  (kind) => {
    it("counts each event on the node that made it and shows the shared queue", async () => {
      const shared = await sharedStores[kind]();
      const node = async (role: "http" | "worker") =>
        startDemo({
          store: await shared.open(),
          storeLabel: shared.label,
          role,
          lease: { holder: `${role}-node` },
        });
      const front = await node("http");
      let worker: Awaited<ReturnType<typeof startDemo>> | undefined;
      try {
        const ids: string[] = [];
        for (let i = 0; i < 2; i++) {
          const created = await rpc(
            front.url,
            "tools/call",
            { name: "generate_report", arguments: { topic: `q${i}`, sections: 2 } },
            asAlice,
          );
          ids.push(created.body?.result?.taskId as string);
        }
        // No worker yet: both wait in the queue.
        const queued = await scrape(front.url);
        expect(sampleValue(queued.samples, "mcp_tasks_queue_depth")).toBe(2);
        expect(sampleValue(queued.samples, "mcp_tasks_running", { status: "working" })).toBe(2);

        worker = await node("worker");
        for (const id of ids) {
          expect((await pollTask(front.url, id, ALICE)).status).toBe("completed");
        }
        // The front hears of the worker's writes through the store's change feed.
        // (The queue empties at the claims, the running gauge at the completions: wait for both.)
        const settled = (
          m: (name: string, labels?: Record<string, string>) => number | undefined,
        ) =>
          m("mcp_tasks_queue_depth") === 0 && m("mcp_tasks_running", { status: "working" }) === 0;
        const f = await scrapeUntil(front.url, settled);
        const w = await scrapeUntil(worker.url, settled);
        const tool = { tool: "generate_report" };
        const store = { store: shared.label };
        expect(sampleValue(f, "mcp_tasks_created_total", { era: "2026-07-28", ...tool })).toBe(2);
        expect(sampleValue(w, "mcp_tasks_created_total", tool)).toBeUndefined();
        expect(sampleValue(f, "mcp_tasks_claims_total")).toBe(0);
        expect(sampleValue(w, "mcp_tasks_claims_total")).toBe(2);
        expect(sampleValue(w, "mcp_tasks_time_to_first_claim_seconds_count", tool)).toBe(2);
        expect(sampleValue(w, "mcp_tasks_finished_total", { status: "completed", ...tool })).toBe(
          2,
        );
        expect(
          sampleValue(f, "mcp_tasks_finished_total", { status: "completed", ...tool }),
        ).toBeUndefined();
        expect(
          sampleValue(f, "mcp_store_operation_duration_seconds_count", { op: "create", ...store }),
        ).toBe(2);
        expect(
          sampleValue(w, "mcp_store_operation_duration_seconds_count", { op: "claim", ...store }),
        ).toBeGreaterThanOrEqual(1);
        // The queue is the store's: both nodes see it empty now.
        expect(sampleValue(f, "mcp_tasks_running", { status: "working" })).toBe(0);
        expect(sampleValue(w, "mcp_tasks_queue_depth")).toBe(0);
      } finally {
        await worker?.stop();
        await front.stop();
        await shared.drop();
      }
    });
  },
);

describe("/metrics on pglite", () => {
  it("labels the store and counts a task run to completion", async () => {
    const server = await startDemo({
      store: await createPGliteTaskStore({ migrate: true }),
      storeLabel: "pglite",
      lease: { holder: "pglite-node" },
    });
    try {
      const created = await rpc(
        server.url,
        "tools/call",
        { name: "slow_compute", arguments: { seconds: 0 }, task: {} },
        asAlice,
      );
      const taskId = created.body?.result?.taskId as string;
      expect((await pollTask(server.url, taskId, ALICE)).status).toBe("completed");
      const { samples } = await scrape(server.url);
      const tool = { tool: "slow_compute" };
      expect(sampleValue(samples, "mcp_tasks_created_total", tool)).toBe(1);
      expect(
        sampleValue(samples, "mcp_tasks_finished_total", { status: "completed", ...tool }),
      ).toBe(1);
      expect(
        sampleValue(samples, "mcp_store_operation_duration_seconds_count", {
          op: "complete",
          store: "pglite",
        }),
      ).toBe(1);
    } finally {
      await server.stop();
    }
  });
});

/** Queue stores on a manual clock, so that a lease can run out on cue. */
const clockedStores = {
  memory: async (clock: ManualClock) => new MemoryTaskStore({ clock, sweepIntervalMs: 0 }),
  pglite: (clock: ManualClock) => createPGliteTaskStore({ clock, migrate: true }),
};

describe.each(Object.keys(clockedStores) as (keyof typeof clockedStores)[])(
  "/metrics of orphans the sweep fails (%s)",
  (kind) => {
    it('counts a task failed "Worker lost" as finished, with its tool and duration', async () => {
      const clock = new ManualClock(Date.UTC(2026, 6, 28, 12));
      const metrics = new DemoMetrics({ storeLabel: kind, processMetrics: false });
      const store = metrics.instrumentStore(await clockedStores[kind](clock));
      const service = new TaskService({ store });
      metrics.attach({ service, runner: { stats: idleStats }, toolNames: ["known"] });
      try {
        const alice = owner({ principalId: "alice" });
        // Claimed at creation by a node that then dies: a 1 s lease, no retry allowed.
        const lost = await service.create(alice, {
          era: "2026-07-28",
          request: { toolName: "known", arguments: {} },
          lease: { holder: "dead-node", durationMs: 1000 },
          execution: { maxAttempts: 1 },
        });
        // One with an attempt left is requeued, not finished.
        await service.create(alice, {
          era: "2026-07-28",
          request: { toolName: "known", arguments: {} },
          lease: { holder: "dead-node", durationMs: 1000 },
          execution: { maxAttempts: 2 },
        });
        clock.advance(2500);
        const sweep = await service.recoverOrphans();
        expect(sweep).toMatchObject({ requeued: 1, failed: 1 });
        expect(sweep.failedTasks.map((t) => [t.taskId, t.status])).toEqual([
          [lost.taskId, "failed"],
        ]);

        const { samples } = parse(await metrics.render());
        const failed = { status: "failed", tool: "known" };
        expect(sampleValue(samples, "mcp_tasks_finished_total", failed)).toBe(1);
        expect(sampleValue(samples, "mcp_tasks_duration_seconds_count", failed)).toBe(1);
        expect(sampleValue(samples, "mcp_tasks_duration_seconds_sum", failed)).toBe(2.5);
        expect(
          sampleValue(samples, "mcp_tasks_orphans_recovered_total", { outcome: "failed" }),
        ).toBe(1);
        expect(
          sampleValue(samples, "mcp_tasks_orphans_recovered_total", { outcome: "requeued" }),
        ).toBe(1);
        // The requeued one is still running: not finished.
        const finished = samples.filter((s) => s.name === "mcp_tasks_finished_total");
        expect(finished.map((s) => [s.labels.status, s.labels.tool, s.value])).toEqual([
          ["failed", "known", 1],
        ]);
      } finally {
        metrics.detach();
        await store.close();
      }
    });
  },
);

describe("metric labels stay bounded", () => {
  it("caps client names and forgets the oldest sessions", () => {
    const metrics = new RequestMetrics({ registry: new Registry(), maxClients: 2, maxSessions: 1 });
    metrics.count("2026-07-28", "a");
    metrics.count("2026-07-28", "b");
    metrics.count("2026-07-28", "c");
    expect(metrics.get("2026-07-28", "other")).toBe(1);
    expect(metrics.get("2026-07-28", "c")).toBe(0);
    metrics.bindSession("s1", "a");
    metrics.bindSession("s2", "b");
    expect(metrics.sessionClient("s1")).toBe("unknown");
    expect(metrics.sessionClient("s2")).toBe("b");
    expect(clientLabel("  ")).toBe("unknown");
    expect(clientLabel(42)).toBe("unknown");
    expect(clientLabel("x".repeat(500))).toHaveLength(128);
  });

  it("labels unknown tools `other` and counts store errors by code", async () => {
    const metrics = new DemoMetrics({ storeLabel: "memory", processMetrics: false });
    const store = metrics.instrumentStore(new MemoryTaskStore({ sweepIntervalMs: 0 }));
    const service = new TaskService({ store });
    metrics.attach({ service, runner: { stats: idleStats }, toolNames: ["known"] });
    const alice = owner({ principalId: "alice" });
    for (const toolName of ["known", "made-up-1", "made-up-2"]) {
      await service.create(alice, { era: "2026-07-28", request: { toolName, arguments: {} } });
    }
    await expect(service.list(alice, { cursor: "garbage" })).rejects.toThrow();
    const { samples } = parse(await metrics.render());
    const created = samples.filter((s) => s.name === "mcp_tasks_created_total");
    expect(created.map((s) => [s.labels.tool, s.value])).toEqual([
      ["known", 1],
      ["other", 2],
    ]);
    expect(
      sampleValue(samples, "mcp_store_errors_total", { op: "list", code: "invalid_cursor" }),
    ).toBe(1);
    expect(samples.some((s) => s.name.startsWith("process_"))).toBe(false);
    metrics.detach();
    await store.close();
  });

  it("keeps the store's queue interface exactly", async () => {
    const metrics = new DemoMetrics({ storeLabel: "memory", processMetrics: false });
    const queueStore = new MemoryTaskStore({ sweepIntervalMs: 0 });
    const plain = withoutQueue(new MemoryTaskStore({ sweepIntervalMs: 0 }));
    expect(supportsQueue(queueStore)).toBe(true);
    expect(supportsQueue(plain)).toBe(false);
    expect(supportsQueue(metrics.instrumentStore(queueStore))).toBe(true);
    expect(supportsQueue(metrics.instrumentStore(plain))).toBe(false);
    await queueStore.close();
    await plain.close();
  });
});

const idleStats = {
  claimed: 0,
  started: 0,
  superseded: 0,
  handedBack: 0,
  running: 0,
  peakRunning: 0,
};

/** The same memory store seen through the base contract only (no queue methods). */
function withoutQueue(store: MemoryTaskStore): TaskStore {
  const out: Record<string, unknown> = {
    watch: store.watch.bind(store),
    close: store.close.bind(store),
  };
  const methods = store as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const op of STORE_OPERATIONS) {
    if (typeof methods[op] === "function") out[op] = methods[op].bind(store);
  }
  return out as unknown as TaskStore;
}
