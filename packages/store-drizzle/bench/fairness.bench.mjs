// Fairness benchmark (issue #21, item 6), PostgreSQL with two nodes (two stores, each its
// own pools and LISTEN connection, on one fresh schema; a runner on each): one owner keeps
// 10x a node's concurrency queued (long tasks, refilled as they finish) while OTHERS owners each create
// short tasks one after another; measured: the others' time from `runner.start` to the
// task's completion (the terminal change on the creating node's feed), p50 and p99. Tasks
// are created on the two nodes in turn. Three scenarios, in this process, one after another
// on a fresh schema each:
//   idle     no flood (the baseline),
//   capped   the flood, with the runner's default per-owner cap (a quarter of concurrency),
//   uncapped the flood, with `maxRunningPerOwner: Infinity` (fair claim order only).
// Target: capped p99 < 2x idle p99. Runs against dist/ (build first). DATABASE_URL. Knobs: CONCURRENCY (8),
// OTHERS (4), SAMPLES per other owner (60), FLOOD_MS (200), SHORT_MS (10), GAP_MS (20).
import { createIdGenerator, isTerminal, owner, TaskRunner, TaskService } from "@mcp-tasks/core";
import { createPostgresTaskStore, dropTaskSchema, migrate } from "../dist/index.js";

const URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
const OTHERS = Number(process.env.OTHERS ?? 4);
const SAMPLES = Number(process.env.SAMPLES ?? 60);
const FLOOD_MS = Number(process.env.FLOOD_MS ?? 200);
const SHORT_MS = Number(process.env.SHORT_MS ?? 10);
const GAP_MS = Number(process.env.GAP_MS ?? 20);
const BACKLOG = 10 * CONCURRENCY;
const era = "2026-07-28";
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const pct = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

const job = {
  name: "job",
  inputSchema: { type: "object" },
  taskMode: "optional",
  run: async (args) => {
    await sleep(args.ms);
    return { content: [] };
  },
};

async function scenario(name, { flood, cap }) {
  const schema = `bench_fair_${process.pid}_${name}`;
  await migrate(URL, { schema });
  const stores = [];
  const runners = [];
  for (let n = 0; n < 2; n++) {
    const store = await createPostgresTaskStore({ url: URL, schema, poolSize: 8 });
    const service = new TaskService({ store, ids: createIdGenerator() });
    stores.push(store);
    runners.push(
      new TaskRunner({
        service,
        tools: [job],
        concurrency: CONCURRENCY,
        onError: () => {},
        ...(cap === false && { maxRunningPerOwner: Number.POSITIVE_INFINITY }),
      }),
    );
  }
  let turn = 0;
  const start = (who, ms) => {
    const n = turn++ % 2;
    return runners[n].start(who, { era, request: { toolName: "job", arguments: { ms } } });
  };
  const done = new Map();
  const unwatches = stores.map((store) =>
    store.watch((c) => {
      if (isTerminal(c.status)) done.get(c.taskId)?.(performance.now());
    }),
  );
  const ended = (taskId) => new Promise((resolve) => done.set(taskId, resolve));
  const attacker = owner({ principalId: "attacker" });
  let stop = false;
  let queuedFlood = 0;
  const feeder = (async () => {
    while (flood && !stop) {
      if (queuedFlood < BACKLOG + CONCURRENCY) {
        queuedFlood++;
        const t = await start(attacker, FLOOD_MS);
        ended(t.taskId).then(() => queuedFlood--);
      } else await sleep(5);
    }
  })();
  if (flood) while (queuedFlood < BACKLOG) await sleep(5);
  const latencies = [];
  await Promise.all(
    Array.from({ length: OTHERS }, async (_, i) => {
      const me = owner({ principalId: `other-${i}` });
      for (let s = 0; s < SAMPLES; s++) {
        await sleep(GAP_MS * (0.5 + Math.random()));
        const began = performance.now();
        const t = await start(me, SHORT_MS);
        const at = await ended(t.taskId);
        latencies.push(at - began);
      }
    }),
  );
  stop = true;
  await feeder;
  for (const unwatch of unwatches) unwatch();
  for (const runner of runners) {
    runner.stopClaiming();
    runner.abortAll();
  }
  for (const runner of runners) await runner.drain();
  for (const store of stores) await store.close();
  await dropTaskSchema(URL, schema).catch(() => {});
  latencies.sort((a, b) => a - b);
  return { name, p50: pct(latencies, 50), p99: pct(latencies, 99), n: latencies.length };
}

const idle = await scenario("idle", { flood: false, cap: true });
const capped = await scenario("capped", { flood: true, cap: true });
const uncapped = await scenario("uncapped", { flood: true, cap: false });
console.log(
  `fairness, PostgreSQL, two nodes: concurrency ${CONCURRENCY} each, flood ${BACKLOG} queued (refilled) x ${FLOOD_MS} ms, ${OTHERS} other owners x ${SAMPLES} tasks of ${SHORT_MS} ms`,
);
for (const r of [idle, capped, uncapped]) {
  console.log(
    `  ${r.name.padEnd(9)} p50 ${r.p50.toFixed(1).padStart(6)} ms  p99 ${r.p99.toFixed(1).padStart(6)} ms  (p99 ${(r.p99 / idle.p99).toFixed(2)}x idle, n=${r.n})`,
  );
}
const ok = capped.p99 < 2 * idle.p99;
console.log(
  `  target p99 < 2x idle: ${ok ? "met" : "MISSED"} (${(capped.p99 / idle.p99).toFixed(2)}x)`,
);
