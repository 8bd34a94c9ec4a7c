// HTTP benchmark: the demo server against a bare node:http JSON-RPC echo, driven by the same
// load generator (`wrk`, 1 thread, 10 connections) in the same run, interleaved round by
// round. Each ratio compares a scenario with the bare echo of the same round; the table
// shows min / median / max over the rounds, so a noisy machine shows up as spread.
//
// Scenarios: 2026-07-28 `tasks/get` of one running task (memory store, PostgreSQL store, and
// the PostgreSQL store with `readPoolSize: 0`, polls on the main pool, for comparison),
// 2025-11-25 `tasks/get` in a session (memory store), and a task-creating `tools/call`
// (memory, PostgreSQL) in both eras (2025-11-25: with `params.task`, in a session); and on
// PostgreSQL the 2026 `tools/call` of a caller whose cap another node's runs hold (two demo
// nodes on one schema: the first runs the caller's cap of 600 s tasks, the second takes the
// flood, every task created queued).
// Each row shows the server's CPU per request (this process), and the PostgreSQL rows the
// local database server's too (its processes in /proc, Linux; see `databaseCpuMs`). For the
// PostgreSQL task-creating rows, a second table says where a call's time goes: the mean time
// of the demo's store creates and completions over each run, as the demo itself times them
// (its metrics registry), and how busy the server's event loop was.
// Targets: 2026 `tools/call` on memory ≥ 0.3x the echo, 2025-11-25 ≥ 0.2x; p50 of the
// PostgreSQL `tools/call` ≤ 5 ms (shown, not a ratio). PostgreSQL runs on a fresh schema of database `test` (DATABASE_URL
// overrides), dropped afterwards; without a reachable database those rows are skipped.
//
// Every run is bounded: BENCH_SECONDS per measurement (default 3), BENCH_ROUNDS rounds
// (default 3), after BENCH_WARMUP_SECONDS of each scenario (default 1); BENCH_SCENARIOS (comma-separated keys) keeps only those rows and the echo;
// BENCH_SETTLE_MS (default 2000) pauses after each task-creating scenario for its leftover
// runs. BENCH_CALLERS is how many callers the 2026 task-creating `tools/call`s come from:
// by default 1, one anonymous caller, whose 10 connections go past the default cap, so that
// most of its tasks are created queued and claimed later; N > 1, a bearer token and owner
// each, taken in turn, each within its per-owner cap, as on a shared server (the 2025-11-25
// calls are always one session's, one owner). BENCH_OWNER_CAP sets the demo's
// `maxRunningPerOwner` (a number, or `off` for no cap; default the runner's, 8 here).
// Needs `wrk` (Debian package `wrk`); installed with apt-get when missing and possible.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { QUEUED_OWNER_LIMIT_MESSAGE } from "@mcp-tasks/core";
import { createPostgresTaskStore } from "@mcp-tasks/store-drizzle";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import {
  benchCallers,
  dropSchema,
  freshPostgresStore,
  listenDemo,
  meanCallMs,
  ownerCapLabel,
  ownerCapOption,
  runBench,
  storeCallSeconds,
} from "./setup.mjs";
import { legacySession, modernBody, modernHeaders, post } from "./wire.mjs";
import { ensureWrk, fmt, luaScript, median, runWrk, usPerRequest } from "./wrk.mjs";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 1);
const CONNECTIONS = 10;
const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const MANY = 10_000_000;
/** Pause after a task-creating scenario, for its leftover runs (see the rounds below). */
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 2000);
const OWNER_CAP = ownerCapOption();
const CALLERS = benchCallers();

/** The bare baseline: read the body, JSON.parse it, answer a ~400-byte JSON-RPC result. */
function startBareEcho() {
  const result = {
    taskId: "0b7f3c1e-6a52-4c39-9a59-2f0d7c7d8e11",
    status: "working",
    statusMessage: "Computing job for 600s",
    createdAt: "2026-12-01T10:00:00.000Z",
    lastUpdatedAt: "2026-12-01T10:00:00.000Z",
    ttlMs: 3600000,
    pollIntervalMs: 500,
    resultType: "complete",
    _meta: { "io.modelcontextprotocol/related": { note: "padding to a realistic size......" } },
  };
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      let id = null;
      try {
        id = JSON.parse(Buffer.concat(chunks).toString("utf8")).id ?? null;
      } catch {}
      const body = JSON.stringify({ jsonrpc: "2.0", id, result });
      res.writeHead(200, {
        "Content-Type": "application/json",
        "Content-Length": Buffer.byteLength(body),
      });
      res.end(body);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      resolve({
        url: `http://127.0.0.1:${server.address().port}/mcp`,
        stop: () => new Promise((r) => server.close(() => r())),
        server,
      });
    });
  });
}

/** A demo server on 127.0.0.1 with one running task, and the requests to drive. */
async function startDemo(store, { legacy = false } = {}) {
  const running = await listenDemo(store, {
    ...OWNER_CAP,
    ...CALLERS.options,
    ...(legacy && { legacy: true }),
  });
  const created = await post(
    running.url,
    modernHeaders("tools/call", "slow_compute"),
    modernBody("tools/call", { name: "slow_compute", arguments: { seconds: 600 } }),
  );
  const taskId = created.body?.result?.taskId;
  if (typeof taskId !== "string") throw new Error(`no task: ${JSON.stringify(created.body)}`);
  const get = {
    headers: modernHeaders("tasks/get", taskId),
    body: modernBody("tasks/get", { taskId }),
  };
  const checked = await post(running.url, get.headers, get.body);
  if (checked.body?.result?.status !== "working") {
    throw new Error(`tasks/get: ${JSON.stringify(checked.body)}`);
  }
  const call = {
    headers: modernHeaders("tools/call", "slow_compute"),
    body: modernBody("tools/call", { name: "slow_compute", arguments: { seconds: 0 } }),
  };
  return { running, get, call };
}

/** A 2025-11-25 session on `url` with one running task: the `tasks/get` to drive. */
async function legacyTaskGet(url) {
  const headers = await legacySession(url, "bench-legacy");
  const created = await post(url, headers, {
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "slow_compute", arguments: { seconds: 600 }, task: { ttl: 3_600_000 } },
  });
  const taskId = created.body?.result?.task?.taskId;
  if (typeof taskId !== "string") throw new Error(`no legacy task: ${JSON.stringify(created)}`);
  const body = { jsonrpc: "2.0", id: 3, method: "tasks/get", params: { taskId } };
  const checked = await post(url, headers, body);
  if (checked.body?.result?.status !== "working") {
    throw new Error(`legacy tasks/get: ${JSON.stringify(checked.body)}`);
  }
  return { headers, body };
}

/** A 2025-11-25 session on `url`: a task-creating `tools/call` (with `params.task`) to drive. */
async function legacyToolCall(url) {
  const headers = await legacySession(url, "bench-legacy-call");
  const body = {
    jsonrpc: "2.0",
    id: 4,
    method: "tools/call",
    params: { name: "slow_compute", arguments: { seconds: 0 }, task: { ttl: 60_000 } },
  };
  const created = await post(url, headers, body);
  if (typeof created.body?.result?.task?.taskId !== "string") {
    throw new Error(`legacy tools/call: ${JSON.stringify(created)}`);
  }
  return { headers, body };
}

const workDir = mkdtempSync(join(tmpdir(), "mcp-tasks-http-bench-"));

let schemaCount = 0;

const PG_BOUNDS = { maxTasks: MANY, maxTasksPerOwner: MANY };

async function openPostgres(storeOptions = {}) {
  schemaCount += 1;
  const schema = `bench_http_${process.pid}_${Date.now().toString(36)}_${schemaCount}`;
  try {
    const opened = await freshPostgresStore(DATABASE_URL, schema, {
      ...PG_BOUNDS,
      ...storeOptions,
    });
    return { ...opened, schema };
  } catch (error) {
    console.log(`PostgreSQL unavailable (${error?.message ?? error}): its rows are skipped`);
    await dropSchema(DATABASE_URL, schema).catch(() => {});
    return undefined;
  }
}

/**
 * Two demo nodes on one PostgreSQL schema: the first runs 600 s tasks of the (anonymous)
 * caller until the store queues one, its cap reached; the second, on a store of its own,
 * takes the flood.
 */
async function startCappedPair(pg) {
  const holder = await listenDemo(pg.store, OWNER_CAP);
  const long = modernBody("tools/call", { name: "slow_compute", arguments: { seconds: 600 } });
  for (let i = 0; ; i++) {
    if (i === 64) throw new Error("capped pair: the caller's cap was never reached");
    const created = await post(holder.url, modernHeaders("tools/call", "slow_compute"), long);
    const taskId = created.body?.result?.taskId;
    const get = await post(
      holder.url,
      modernHeaders("tasks/get", taskId),
      modernBody("tasks/get", { taskId }),
    );
    if (get.body?.result?.statusMessage === QUEUED_OWNER_LIMIT_MESSAGE) break;
  }
  const store = await createPostgresTaskStore({
    url: DATABASE_URL,
    schema: pg.schema,
    ...PG_BOUNDS,
  });
  const flooded = await startDemo(store);
  return { holder, flooded };
}

async function main() {
  const wrkVersion = ensureWrk();
  const bare = await startBareEcho();
  const memory = await startDemo(
    new MemoryTaskStore({ sweepIntervalMs: 0, maxTasks: MANY, maxTasksPerOwner: MANY }),
    { legacy: true },
  );
  const legacyGet = await legacyTaskGet(memory.running.url);
  const legacyCall = await legacyToolCall(memory.running.url);
  const pg = await openPostgres();
  const pgDemo = pg ? await startDemo(pg.store, { legacy: true }) : undefined;
  const pgLegacyCall = pgDemo ? await legacyToolCall(pgDemo.running.url) : undefined;
  // The same store with polls on the main pool (no read pool): what the read pool changes.
  const pgShared = pg ? await openPostgres({ readPoolSize: 0 }) : undefined;
  const pgSharedDemo = pgShared ? await startDemo(pgShared.store) : undefined;
  // Without a per-owner cap there is no capped pair (and no store of its own to close).
  const capped = OWNER_CAP.maxRunningPerOwner !== Number.POSITIVE_INFINITY;
  const pgCapped = pg && capped ? await openPostgres() : undefined;
  const cappedPair = pgCapped ? await startCappedPair(pgCapped) : undefined;

  const scenarios = [
    { key: "bare", label: "bare node:http echo", url: bare.url, req: memory.get },
    {
      key: "mem-get",
      label: "2026 tasks/get, memory",
      url: memory.running.url,
      req: memory.get,
      target: 0.5,
    },
    ...(pgDemo
      ? [
          {
            key: "pg-get",
            label: "2026 tasks/get, PostgreSQL",
            url: pgDemo.running.url,
            req: pgDemo.get,
            target: 0.25,
          },
          {
            key: "pg-get-shared",
            label: "2026 tasks/get, PostgreSQL, readPoolSize 0 (polls on the main pool)",
            url: pgSharedDemo.running.url,
            req: pgSharedDemo.get,
          },
        ]
      : []),
    {
      key: "legacy-get",
      label: "2025-11-25 tasks/get in a session, memory",
      url: memory.running.url,
      req: legacyGet,
      target: 0.3,
    },
    {
      key: "mem-call",
      creates: true,
      label: "2026 task-creating tools/call, memory",
      url: memory.running.url,
      req: memory.call,
      tokens: CALLERS.tokens,
      target: 0.3,
    },
    {
      key: "legacy-call",
      creates: true,
      label: "2025-11-25 task-creating tools/call in a session, memory",
      url: memory.running.url,
      req: legacyCall,
      target: 0.2,
    },
    ...(pgDemo
      ? [
          {
            key: "pg-call",
            creates: true,
            timesStoreCalls: true,
            app: pgDemo.running.app,
            label: "2026 task-creating tools/call, PostgreSQL",
            url: pgDemo.running.url,
            req: pgDemo.call,
            tokens: CALLERS.tokens,
            p50Target: 5,
          },
          {
            key: "pg-legacy-call",
            creates: true,
            timesStoreCalls: true,
            app: pgDemo.running.app,
            label: "2025-11-25 task-creating tools/call in a session, PostgreSQL",
            url: pgDemo.running.url,
            req: pgLegacyCall,
            p50Target: 5,
          },
        ]
      : []),
    ...(cappedPair
      ? [
          {
            // Every task is created queued and runs no handler: nothing to settle afterwards.
            key: "pg-call-capped",
            timesStoreCalls: true,
            app: cappedPair.flooded.running.app,
            label:
              "2026 task-creating tools/call, PostgreSQL, the caller's cap held by another node",
            url: cappedPair.flooded.running.url,
            req: cappedPair.flooded.call,
          },
        ]
      : []),
  ];
  // BENCH_SCENARIOS=mem-call,legacy-call runs only those rows (and the echo they compare with).
  const only = process.env.BENCH_SCENARIOS?.split(",").map((key) => key.trim());
  if (only !== undefined) {
    scenarios.splice(
      0,
      scenarios.length,
      ...scenarios.filter((s) => s.key === "bare" || only.includes(s.key)),
    );
  }
  for (const s of scenarios) {
    s.script = luaScript(workDir, s.key, s.req, s.tokens);
    s.runs = [];
  }

  try {
    for (const s of scenarios) await runWrk(s.url, s.script, WARMUP_SECONDS);
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of scenarios) {
        const before = s.timesStoreCalls ? await storeCallSeconds(s.app) : undefined;
        const run = await runWrk(s.url, s.script, SECONDS);
        if (before !== undefined) {
          const after = await storeCallSeconds(s.app);
          run.createMs = meanCallMs(before, after, "create");
          run.completeMs = meanCallMs(before, after, "complete");
        }
        s.runs.push(run);
        // A task-creating scenario leaves runs behind (creates outpace the runs on a queue
        // store: up to a second of claims and completions): let them finish before the next
        // measurement, which shares the process and the database.
        if (s.creates) await sleep(SETTLE_MS);
        if (run.bad > 0 || run.errors) {
          console.log(`  ${s.key}: ${run.bad} non-2xx responses ${run.errors ?? ""}`);
        }
      }
      console.log(`round ${round + 1}/${ROUNDS} done`);
    }
  } finally {
    await memory.running.stop();
    if (pgDemo) await pgDemo.running.stop();
    if (pgSharedDemo) await pgSharedDemo.running.stop();
    if (cappedPair) {
      await cappedPair.flooded.running.stop();
      await cappedPair.holder.stop();
    }
    await pg?.drop();
    await pgShared?.drop();
    await pgCapped?.drop();
    await bare.stop();
    rmSync(workDir, { recursive: true, force: true });
  }

  const bareRuns = scenarios[0].runs;
  console.log(
    `\nwrk ${wrkVersion}, 1 thread, ${CONNECTIONS} connections, ${SECONDS} s per run, ${ROUNDS} interleaved rounds; Node ${process.version}; ${cpus().length} cores; load average at end ${loadavg()
      .map((n) => n.toFixed(2))
      .join(" ")}; owner cap ${ownerCapLabel()}; 2026 task-creating calls from ${CALLERS.label}`,
  );
  console.log(
    "\n| scenario | req/s (median) | vs bare, min / median / max | p50 ms | p99 ms | server CPU | CPU µs/req (vs bare) | PostgreSQL CPU µs/req | target |",
  );
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---|");
  const cpuPerRequest = (run) => usPerRequest(run);
  // The database's share of a request, on the rows served from PostgreSQL (see databaseCpuMs).
  const databasePerRequest = (s) =>
    s.key.startsWith("pg-") ? fmt(median(s.runs.map((r) => usPerRequest(r, r.databaseCpu)))) : "";
  const bareCost = median(bareRuns.map(cpuPerRequest));
  const verdicts = [];
  for (const s of scenarios) {
    const ratios = s.runs.map((run, i) => run.rps / bareRuns[i].rps);
    const ratio = median(ratios);
    const p50 = median(s.runs.map((r) => r.p50));
    const target =
      s.target !== undefined
        ? `≥ ${s.target}x: ${ratio >= s.target ? "met" : "NOT met"}`
        : s.p50Target !== undefined
          ? `p50 ≤ ${s.p50Target} ms: ${p50 <= s.p50Target ? "met" : "NOT met"}`
          : "";
    if (s.target !== undefined) verdicts.push(ratio >= s.target);
    if (s.p50Target !== undefined) verdicts.push(p50 <= s.p50Target);
    console.log(
      `| ${s.label} | ${fmt(median(s.runs.map((r) => r.rps)))} | ${fmt(Math.min(...ratios), 2)} / ${fmt(ratio, 2)} / ${fmt(Math.max(...ratios), 2)} | ${fmt(p50, 2)} | ${fmt(median(s.runs.map((r) => r.p99)), 2)} | ${fmt(median(s.runs.map((r) => r.serverCpu)) * 100)} % | ${fmt(median(s.runs.map(cpuPerRequest)))} (${fmt(bareCost / median(s.runs.map(cpuPerRequest)), 2)}x) | ${databasePerRequest(s)} | ${target} |`,
    );
  }
  const timed = scenarios.filter((s) => s.timesStoreCalls);
  if (timed.length > 0) {
    // Where a call's time goes: the store calls as the demo times them (from the caller's
    // side: the wait for a batch and the round trip included), and how busy the server's
    // event loop was (the share of the run it was not waiting for I/O or timers).
    console.log(
      "\nWhere a PostgreSQL task-creating call's time goes (medians over the rounds; store calls timed by the demo, `mcp_store_operation_duration_seconds`):\n",
    );
    console.log(
      "| scenario | p50 ms | store create, mean ms | store complete, mean ms | server CPU | server event loop busy |",
    );
    console.log("|---|---:|---:|---:|---:|---:|");
    for (const s of timed) {
      const m = (pick) => median(s.runs.map(pick));
      const ms = [m((r) => r.p50), m((r) => r.createMs), m((r) => r.completeMs)];
      const busy = [m((r) => r.serverCpu), m((r) => r.loopBusy)];
      console.log(
        `| ${s.label} | ${ms.map((n) => fmt(n, 2)).join(" | ")} | ${busy.map((n) => `${fmt(n * 100)} %`).join(" | ")} |`,
      );
    }
  }
  const bareCpu = median(bareRuns.map((r) => r.serverCpu));
  console.log(
    `\nbare echo server CPU ${fmt(bareCpu * 100)} % of one core: ${bareCpu >= 0.85 ? "server-bound (the generator keeps up)" : "below one core: the generator may be the bottleneck"}`,
  );
  if (process.env.BENCH_STRICT === "1" && verdicts.includes(false)) process.exitCode = 1;
}

runBench(main);
