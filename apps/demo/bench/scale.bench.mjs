// Creation cost against the number of stored tasks (issue #20 §6), on PostgreSQL and on
// PGlite: with 0, 100 000 and 1 000 000 live tasks pre-filled in bulk (one INSERT … SELECT
// generate_series: the HTTP callers' completed and live until their ttl, the other owners'
// running; then the usage counters rebuilt as migration 0004 does), it measures
//   - the store's create, get and complete throughput at 10 operations in flight, quotas on
//     (as the demo sets them, with room for the pre-filled rows);
//   - the two writes of a task-creating `tools/call`, made on the store as the demo's runner
//     makes them (a create that claims the task under the runner's owner limits, then its
//     completion through the run's fence), for the HTTP callers, at 10 in flight: what the
//     call costs the store, without the HTTP and MCP layers and the run around it;
//   - a task-creating 2026-07-28 `tools/call` over HTTP to the demo app on that store (wrk,
//     1 thread, 10 connections): requests/s, p50 and p99;
//   - the same two writes behind the thinnest HTTP front a `tools/call` could have (a bare
//     node:http server that parses the request, makes the create, answers, then makes the
//     completion: `thin-front.mjs`), the same wrk load: what any server's `tools/call`
//     reaches at most on this store and machine, against which the demo's rate reads too;
//   - the CPU time a store create and an HTTP `tools/call` cost: this process's (the demo
//     server, the store's client side, PGlite) and, on PostgreSQL, the local server's (its
//     processes in /proc, Linux): where the ratio between the two rates comes from;
// and at the end, the expiry of every pre-filled task by one `cleanupExpired` (bounded
// batches). The targets (ratios in this run): on PostgreSQL at 100 000 live tasks, HTTP
// `tools/call` ≥ 0.8× its rate on the empty table and ≥ 0.5× the store's own create rate at
// the same concurrency; p50 of that `tools/call` ≤ 5 ms.
//
// Bounded: BENCH_SECONDS (2) per measurement, BENCH_ROUNDS (2) rounds each.
// BENCH_SCALE_LEVELS (0,100000,1000000) and BENCH_SCALE_BACKENDS (postgres,pglite) pick the
// cases. BENCH_CALLERS is how many callers the `tools/call`s come from: by default 1, one
// anonymous caller, past the default cap (most of its tasks queued, then claimed); N > 1, a
// bearer token and owner each, taken in turn, each within its per-owner cap. BENCH_OWNER_CAP
// sets the demo's per-owner cap of running tasks (`off`, a number; default the runner's, 8
// here). Runs against dist/
// (build first). PostgreSQL at DATABASE_URL, in a schema of its own that is dropped at the
// end.
//
//   node bench/scale.bench.mjs
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createIdGenerator, owner as makeOwner } from "@mcp-tasks/core";
import { ownerKey, ownerScope } from "@mcp-tasks/core/store";
import { createPGliteTaskStore } from "@mcp-tasks/store-drizzle";
import {
  benchCallers,
  freshPostgresStore,
  listenDemo,
  ownerCapLabel,
  ownerCapOption,
  ownersRunsSettled,
  recount,
  runBench,
} from "./setup.mjs";
import { startThinFront } from "./thin-front.mjs";
import { modernBody, modernHeaders, post } from "./wire.mjs";
import { databaseCpuMs, ensureWrk, fmt, luaScript, median, runWrk, usPerRequest } from "./wrk.mjs";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const LEVELS = (process.env.BENCH_SCALE_LEVELS ?? "0,100000,1000000").split(",").map(Number);
const BACKENDS = (process.env.BENCH_SCALE_BACKENDS ?? "postgres,pglite").split(",");
const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const IN_FLIGHT = 10;
const WARMUP_MS = 300;
// Room for every level and what the measurements add; the per-owner byte quota as the demo.
const QUOTAS = {
  maxTasks: 10_000_000,
  maxTasksPerOwner: 10_000_000,
  maxBytesPerOwner: 64 * 1024 * 1024,
};
const STORE_TIMEOUT_MS = 600_000; // the bulk statements below run through the store's pool

const OPEN = { requireOwner: false };
const CALLERS = benchCallers();
/** Owners of the pre-filled rows who send no HTTP request (their tasks are running). */
const OTHERS = 4;
// Four owners and the HTTP callers (whose tasks the HTTP part creates) share the rows.
const OWNERS = [
  ...Array.from({ length: OTHERS }, (_, i) => makeOwner({ principalId: `owner-${i}` })),
  ...CALLERS.owners,
];
const scopes = OWNERS.map((o) => ownerScope(o, OPEN));
// The rows the store measurements create name a tool the demo does not have, so its runner
// leaves them queued; the HTTP part creates `slow_compute` tasks, which it runs at once.
const STORED = { toolName: "bench_echo", arguments: { text: "hello" } };
const CALL = { name: "slow_compute", arguments: { seconds: 0 } };
/** The result a completed pre-filled task holds. */
const DONE = { content: [{ type: "text", text: "done" }] };
/** The worker the store's own create-and-complete cycles claim their tasks for. */
const CYCLE_HOLDER = "bench-cycle-worker";
const callerScopes = CALLERS.owners.map((o) => ownerScope(o, OPEN));
const ids = createIdGenerator();
const pick = (n) => Math.floor(Math.random() * n);
/** A new task of the store measurements (`extra`: a lease and owner limits, say). */
const storedTask = (extra = {}) => ({
  taskId: ids(),
  era: "2026-07-28",
  request: STORED,
  ttlMs: 3_600_000,
  ttlAnchor: "creation",
  pollIntervalMs: null,
  ...extra,
});

/**
 * Operations per second of `op` with `inFlight` callers, after a short warm-up. With
 * `costs`, also pushes the CPU time per operation over the measurement (see {@link cpuCost}).
 */
async function measure(op, costs, inFlight = IN_FLIGHT) {
  let count = 0;
  let t0 = 0;
  let cpu;
  const warmEnd = performance.now() + WARMUP_MS;
  const end = warmEnd + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      for (;;) {
        const now = performance.now();
        if (now >= end) return;
        if (t0 === 0 && now >= warmEnd) {
          t0 = now;
          cpu = cpuSample();
        }
        await op();
        if (t0 !== 0) count++;
      }
    }),
  );
  costs?.push(cpuCost(cpu, count));
  return count / ((performance.now() - t0) / 1000);
}

/** This process's CPU time and the local PostgreSQL server's, now (ms). */
function cpuSample() {
  const { user, system } = process.cpuUsage();
  return { process: (user + system) / 1000, database: databaseCpuMs() };
}

/**
 * CPU µs per operation since `before`, `n` operations: this process's (the store's client
 * side, the demo server, PGlite) and the local PostgreSQL server's (see `databaseCpuMs`).
 */
function cpuCost(before, n) {
  const after = cpuSample();
  return {
    process: ((after.process - before.process) * 1000) / n,
    database: ((after.database - before.database) * 1000) / n,
  };
}

/** Operations per second of `op` over `items`, `inFlight` at a time, bounded in time. */
async function drain(items, op, inFlight = IN_FLIGHT) {
  let next = 0;
  let done = 0;
  const t0 = performance.now();
  const end = t0 + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < items.length && performance.now() < end) {
        await op(items[next++]);
        done++;
      }
    }),
  );
  return done / ((performance.now() - t0) / 1000);
}

/**
 * Adds `n` live tasks, numbered from `from`, shared round-robin by the owners. The HTTP
 * callers' (whose tasks the HTTP part creates) are completed, live until their ttl ends, as
 * their earlier `tools/call`s of `slow_compute` leave them (the issue's own measurement: a
 * table of such tasks); the other owners' are running, held by a worker that is not there.
 * Running, a caller's own would hold its per-owner cap for good, so its HTTP tasks would
 * be created queued and never run: another piece of work than on the empty table.
 */
async function prefill(store, table, from, n) {
  if (n <= 0) return;
  const isCaller = `g % ${OWNERS.length} >= ${OTHERS}`;
  await store.query(
    `INSERT INTO ${table} (id, owner_key, owner_principal, era, status, request, tool_name, ttl_ms,
       ttl_anchor, created_at, updated_at, lease_holder, lease_expires_at, attempt, fencing_token,
       payload_bytes, result, expires_at)
     SELECT 'prefill:' || g, ($1::text::jsonb ->> (g % ${OWNERS.length})::int),
       ($2::text::jsonb ->> (g % ${OWNERS.length})::int), '2026-07-28',
       CASE WHEN ${isCaller} THEN 'completed' ELSE 'working' END,
       $3::text::jsonb, $4::text, 3600000, 'creation', now(), now(),
       CASE WHEN ${isCaller} THEN NULL ELSE 'seed-worker' END,
       CASE WHEN ${isCaller} THEN NULL ELSE now() + interval '1 day' END,
       1, 1, 15,
       CASE WHEN ${isCaller} THEN $7::text::jsonb END,
       CASE WHEN ${isCaller} THEN now() + interval '1 hour' END
     FROM generate_series($5::int, $6::int) AS g`,
    [
      JSON.stringify(OWNERS.map(ownerKey)),
      JSON.stringify(OWNERS.map((o) => o.principalId)),
      JSON.stringify(STORED),
      STORED.toolName,
      from,
      from + n - 1,
      JSON.stringify(DONE),
    ],
  );
}

/**
 * Waits (at most 10 s) until the demo has run every task of the HTTP callers that it took on:
 * what a `tools/call` measurement leaves running shares the machine with the next
 * measurement, and settling while `dropCreated` deletes the rows, its endings deadlocked
 * with that DELETE (PostgreSQL picks one to fail, and the bench stopped).
 */
function callerRunsSettled(store, schema) {
  return ownersRunsSettled(store, schema, CALLERS.ownerKeys, "the demo's HTTP callers");
}

/** Deletes what the measurements created, so that each level starts from its pre-filled rows. */
async function dropCreated(store, schema) {
  await callerRunsSettled(store, schema);
  await store.query(`DELETE FROM "${schema}"."mcp_tasks" WHERE id NOT LIKE 'prefill:%'`);
  await recount(store, schema);
}

async function openBackend(kind, schema) {
  const options = { schema, ...QUOTAS, operationTimeoutMs: STORE_TIMEOUT_MS };
  if (kind === "postgres") {
    return freshPostgresStore(DATABASE_URL, schema, { poolSize: 10, ...options });
  }
  const store = await createPGliteTaskStore({ ...options, migrate: true });
  return { store, drop: async () => {} };
}

/** The demo app on `store`, and the task-creating `tools/call` to drive over HTTP. */
async function startDemo(store) {
  const running = await listenDemo(store, { ...ownerCapOption(), ...CALLERS.options });
  const call = {
    headers: modernHeaders("tools/call", CALL.name),
    body: modernBody("tools/call", CALL),
  };
  const checked = await post(running.url, call.headers, call.body);
  if (checked.body?.result?.resultType !== "task") {
    await running.stop();
    throw new Error(`tools/call: ${JSON.stringify(checked.body)}`);
  }
  return { running, call };
}

async function benchBackend(kind, workDir) {
  const schema = `bench_scale_${kind}_${process.pid}`;
  const { store, drop } = await openBackend(kind, schema);
  const table = `"${schema}"."mcp_tasks"`;
  const rows = [];
  let filled = 0;
  // One demo app on the store for the whole backend: stopping it closes the store.
  let demo;
  let thin;
  try {
    demo = await startDemo(store);
    const script = luaScript(workDir, kind, demo.call, CALLERS.tokens);
    // A `tools/call`'s two writes, as the demo's runner makes them: the create claims the
    // task for a worker under the runner's owner limits, then its completion. A task
    // created queued (its owner at its cap: one anonymous caller, 10 in flight) is left
    // in the queue until the level's rows are dropped: no worker runs its tool.
    const { ownerLimits } = demo.running.app.runner;
    const lease = { holder: CYCLE_HOLDER, durationMs: 30_000 };
    let turn = 0;
    const createClaimed = () =>
      store.create(storedTask({ lease, ownerLimits }), callerScopes[turn++ % callerScopes.length]);
    const completeClaimed = async (task) => {
      const { holder, fencingToken } = task.execution;
      if (holder === null) return;
      const fence = { holder, fencingToken };
      await store.complete(task.taskId, { ...ownerScope(task.owner, OPEN), fence }, DONE);
    };
    // The same two writes behind the thinnest HTTP front (see thin-front.mjs).
    thin = await startThinFront({ create: createClaimed, complete: completeClaimed });
    for (const live of LEVELS) {
      if (live > filled) {
        const t0 = performance.now();
        await prefill(store, table, filled + 1, live - filled);
        filled = live;
        await recount(store, schema);
        console.log(
          `${kind}: ${live.toLocaleString("en-US")} live tasks pre-filled in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
        );
      }
      let created = [];
      const create = async () => {
        created.push(await store.create(storedTask(), scopes[pick(scopes.length)]));
      };
      const get = () => {
        if (filled > 0) {
          const g = 1 + pick(filled);
          return store.get(`prefill:${g}`, scopes[g % scopes.length]);
        }
        const task = created[pick(created.length)];
        return store.get(task.taskId, ownerScope(task.owner, OPEN));
      };
      const complete = (task) => store.complete(task.taskId, ownerScope(task.owner, OPEN), DONE);
      const cycle = async () => completeClaimed(await createClaimed());
      const result = {
        live,
        create: [],
        createCost: [],
        get: [],
        complete: [],
        cycle: [],
        cycleCost: [],
        http: [],
        thin: [],
      };
      await runWrk(demo.running.url, script, 1, IN_FLIGHT); // warm-up
      await runWrk(thin.url, script, 1, IN_FLIGHT);
      for (let round = 0; round < ROUNDS; round++) {
        created = [];
        result.create.push(await measure(create, result.createCost));
        result.get.push(await measure(get));
        result.complete.push(await drain(created, complete));
        result.cycle.push(await measure(cycle, result.cycleCost));
        result.http.push(await runWrk(demo.running.url, script, SECONDS, IN_FLIGHT));
        await callerRunsSettled(store, schema);
        result.thin.push(await runWrk(thin.url, script, SECONDS, IN_FLIGHT));
        await callerRunsSettled(store, schema);
      }
      rows.push(result);
      const http = result.http;
      console.log(
        `${kind} ${live.toLocaleString("en-US")} live: create ${fmt(median(result.create))}/s, get ${fmt(median(result.get))}/s, complete ${fmt(median(result.complete))}/s, create + complete ${fmt(median(result.cycle))}/s; HTTP tools/call ${fmt(median(http.map((r) => r.rps)))}/s p50 ${fmt(median(http.map((r) => r.p50)), 2)} ms p99 ${fmt(median(http.map((r) => r.p99)), 2)} ms; thinnest front ${fmt(median(result.thin.map((r) => r.rps)))}/s${[...http, ...result.thin].some((r) => r.bad > 0 || r.errors) ? " (some non-2xx or socket errors)" : ""}`,
      );
      await dropCreated(store, schema);
    }
    // Expiry: every pre-filled task ends in the past; one cleanupExpired removes them all in
    // bounded batches (one statement per batch, counters included).
    let expiry;
    if (filled > 0) {
      await store.query(
        `UPDATE ${table} SET status = 'completed', lease_holder = NULL, lease_expires_at = NULL,
           expires_at = now() - interval '1 second' WHERE id LIKE 'prefill:%'`,
      );
      await store.query(`VACUUM ANALYZE ${table}`);
      const t0 = performance.now();
      const removed = await store.cleanupExpired();
      const seconds = (performance.now() - t0) / 1000;
      expiry = { removed, seconds };
    }
    return { kind, rows, expiry };
  } finally {
    try {
      await thin?.stop();
    } finally {
      if (demo) await demo.running.stop();
      else await store.close();
      await drop();
    }
  }
}

async function main() {
  const wrk = ensureWrk();
  const workDir = mkdtempSync(join(tmpdir(), "mcp-tasks-scale-bench-"));
  const results = [];
  try {
    for (const kind of BACKENDS) results.push(await benchBackend(kind, workDir));
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
  console.log(
    `\nwrk ${wrk}, 1 thread, ${IN_FLIGHT} connections; store operations ${IN_FLIGHT} in flight; ${SECONDS} s per measurement, ${ROUNDS} rounds (medians); Node ${process.version}; ${cpus().length} cores; load average at end ${loadavg()
      .map((n) => n.toFixed(2))
      .join(" ")}; owner cap ${ownerCapLabel()}; HTTP calls from ${CALLERS.label}`,
  );
  console.log(
    "\n| store | live tasks | create/s | get/s | complete/s | create + complete/s | HTTP tools/call req/s | p50 ms | p99 ms | HTTP vs empty | HTTP vs store create | HTTP vs store create + complete | thinnest front req/s | thinnest front vs store create | HTTP vs thinnest front | CPU µs per create | CPU µs per create + complete | CPU µs per HTTP tools/call | CPU µs per thinnest front call |",
  );
  console.log(
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  );
  // This process's CPU per operation, plus the PostgreSQL server's (PGlite's is this process's).
  const cost = (kind, process, database) =>
    kind === "postgres" ? `${fmt(process)} + ${fmt(database)}` : fmt(process);
  const verdicts = [];
  for (const { kind, rows } of results) {
    const empty = rows.find((r) => r.live === 0);
    for (const r of rows) {
      const rps = median(r.http.map((h) => h.rps));
      const vsEmpty = empty ? rps / median(empty.http.map((h) => h.rps)) : Number.NaN;
      const vsCreate = rps / median(r.create);
      const vsCycle = rps / median(r.cycle);
      const thinRps = median(r.thin.map((h) => h.rps));
      const p50 = median(r.http.map((h) => h.p50));
      const httpCost = (runs) =>
        cost(
          kind,
          median(runs.map((h) => usPerRequest(h))),
          median(runs.map((h) => usPerRequest(h, h.databaseCpu))),
        );
      const perOp = (costs) =>
        cost(kind, median(costs.map((c) => c.process)), median(costs.map((c) => c.database)));
      console.log(
        `| ${kind} | ${r.live.toLocaleString("en-US")} | ${fmt(median(r.create))} | ${fmt(median(r.get))} | ${fmt(median(r.complete))} | ${fmt(median(r.cycle))} | ${fmt(rps)} | ${fmt(p50, 2)} | ${fmt(median(r.http.map((h) => h.p99)), 2)} | ${fmt(vsEmpty, 2)} | ${fmt(vsCreate, 2)} | ${fmt(vsCycle, 2)} | ${fmt(thinRps)} | ${fmt(thinRps / median(r.create), 2)} | ${fmt(rps / thinRps, 2)} | ${perOp(r.createCost)} | ${perOp(r.cycleCost)} | ${httpCost(r.http)} | ${httpCost(r.thin)} |`,
      );
      if (kind === "postgres" && r.live === 100_000) {
        verdicts.push(
          [`HTTP tools/call at 100,000 live ≥ 0.8× empty`, vsEmpty >= 0.8, fmt(vsEmpty, 2)],
          [
            `HTTP tools/call at 100,000 live ≥ 0.5× store create`,
            vsCreate >= 0.5,
            `${fmt(vsCreate, 2)} (the thinnest front over the same store: ${fmt(thinRps / median(r.create), 2)})`,
          ],
          [`p50 of HTTP tools/call ≤ 5 ms`, p50 <= 5, `${fmt(p50, 2)} ms`],
        );
      }
    }
  }
  for (const { kind, expiry } of results) {
    if (expiry) {
      console.log(
        `\n${kind}: expiry removed ${expiry.removed.toLocaleString("en-US")} tasks in ${expiry.seconds.toFixed(2)} s (${fmt(expiry.removed / expiry.seconds)} tasks/s) by one cleanupExpired`,
      );
    }
  }
  if (verdicts.length > 0) {
    console.log("\nTargets (PostgreSQL):");
    for (const [what, met, value] of verdicts) {
      console.log(`- ${what}: ${value}, ${met ? "met" : "NOT met"}`);
    }
  }
  if (process.env.BENCH_STRICT === "1" && verdicts.some(([, met]) => !met)) process.exitCode = 1;
}

runBench(main);
