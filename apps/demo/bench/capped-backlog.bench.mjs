// One caller's queue beside a backlog of owners held at their cap elsewhere, on PostgreSQL.
// The demo (default cap: 8 running per owner) takes task-creating 2026 `tools/call`s of
// `slow_compute` (0 s) from one anonymous caller (wrk, 1 thread, 10 connections), so the
// caller goes past its cap: most of its tasks are created queued, and a claim runs each when
// a place under the cap frees. In alternate rounds the table also holds a backlog: N other
// owners (BENCH_BACKLOG_OWNERS, default 1,000) with 8 tasks running each, held by a worker
// that is not there (its lease a day ahead), and 2 queued each, as on a shared cluster where
// many tenants' long runs fill their caps. Reported per round: req/s, p50, p99, and how many
// of the caller's tasks ran to completion per second during the run (its queue's
// throughput), with the tasks still queued at the end; then the medians with and without the
// backlog, and their ratio. What it shows: a claim looks at every queue it passes and counts
// each of their owners' running tasks, so owners at their cap cost every claim (see
// BENCHMARKS.md, "What a claim costs with many owners at their cap").
//
// Run after a build: `cd apps/demo && node bench/capped-backlog.bench.mjs`
// (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test; a fresh schema, dropped at
// the end; BENCH_ROUNDS 3 of each, BENCH_SECONDS 3.) Each round's leftover queued tasks of
// the caller are deleted after it (and the usage counters rebuilt), so rounds start alike.
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { owner as makeOwner } from "@mcp-tasks/core";
import { ownerKey } from "@mcp-tasks/core/store";
import { freshPostgresStore, listenDemo, ownersRunsSettled, recount, runBench } from "./setup.mjs";
import { modernBody, modernHeaders } from "./wire.mjs";
import { ensureWrk, fmt, luaScript, median, runWrk } from "./wrk.mjs";

const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const BACKLOG_OWNERS = Number(process.env.BENCH_BACKLOG_OWNERS ?? 1000);
const MANY = 10_000_000;
/** The backlog's rows: an id prefix the caller's tasks never have. */
const BACKLOG = "backlog:";

async function main() {
  ensureWrk();
  const schema = `bench_backlog_${process.pid}_${Date.now().toString(36)}`;
  const tasks = `"${schema}"."mcp_tasks"`;
  const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-backlog-bench-"));
  const { store, drop } = await freshPostgresStore(DATABASE_URL, schema, {
    maxTasks: MANY,
    maxTasksPerOwner: MANY,
  });
  const running = await listenDemo(store);
  // The bench's one caller: anonymous, as `listenDemo`'s resolver makes every request.
  const callerKey = ownerKey(makeOwner({}));
  const keys = Array.from({ length: BACKLOG_OWNERS }, (_, i) =>
    ownerKey(makeOwner({ principalId: `capped-${i}` })),
  );

  /** The caller's tasks completed so far, and queued now. */
  const callerTasks = async () => {
    const [row] = await store.query(
      `SELECT count(*) FILTER (WHERE status = 'completed')::int AS done,
         count(*) FILTER (WHERE lease_holder IS NULL AND status = 'working')::int AS queued
       FROM ${tasks} WHERE id NOT LIKE '${BACKLOG}%'`,
    );
    return row;
  };
  const setBacklog = async (on) => {
    await store.query(`DELETE FROM ${tasks} WHERE id LIKE '${BACKLOG}%'`);
    if (on) {
      // 8 running (held by a gone worker, lease a day ahead) and 2 queued per owner.
      await store.query(
        `INSERT INTO ${tasks} (id, owner_key, era, status, request, tool_name, ttl_ms, ttl_anchor,
           created_at, updated_at, lease_holder, lease_expires_at, attempt, fencing_token, payload_bytes)
         SELECT '${BACKLOG}' || o || ':' || j, ($1::text::jsonb ->> o), '2026-07-28', 'working',
           $2::text::jsonb, 'slow_compute', 3600000, 'creation', now(), now(),
           CASE WHEN j < 8 THEN 'gone-worker' END,
           CASE WHEN j < 8 THEN now() + interval '1 day' END,
           CASE WHEN j < 8 THEN 1 ELSE 0 END, CASE WHEN j < 8 THEN 1 ELSE 0 END, 10
         FROM generate_series(0, $3::int - 1) AS o, generate_series(0, 9) AS j`,
        [
          JSON.stringify(keys),
          JSON.stringify({ toolName: "slow_compute", arguments: { seconds: 0 } }),
          BACKLOG_OWNERS,
        ],
      );
    }
    await recount(store, schema);
  };
  /** Deletes the caller's queued tasks, then waits for its runs to end. */
  const settle = async () => {
    const dropQueued = () =>
      store.query(
        `DELETE FROM ${tasks} WHERE id NOT LIKE '${BACKLOG}%' AND lease_holder IS NULL AND status = 'working'`,
      );
    await dropQueued();
    await ownersRunsSettled(store, schema, [callerKey], "the caller");
    // A create still in flight when the first delete ran may have queued one more.
    await dropQueued();
    await recount(store, schema);
  };

  try {
    const script = luaScript(dir, "backlog", {
      headers: modernHeaders("tools/call", "slow_compute"),
      body: modernBody("tools/call", { name: "slow_compute", arguments: { seconds: 0 } }),
    });
    await runWrk(running.url, script, 1); // warm-up
    await settle();
    const rows = { without: [], with: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const on of [false, true]) {
        await setBacklog(on);
        const before = await callerTasks();
        const r = await runWrk(running.url, script, SECONDS);
        const after = await callerTasks();
        const ran = (after.done - before.done) / SECONDS;
        (on ? rows.with : rows.without).push({ ...r, ran });
        console.log(
          `round ${round + 1}, ${on ? `backlog of ${BACKLOG_OWNERS.toLocaleString("en-US")} owners at their cap` : "no backlog"}: ${fmt(r.rps)} req/s, p50 ${fmt(r.p50, 2)} ms, p99 ${fmt(r.p99, 2)} ms; the caller's tasks run ${fmt(ran)}/s, ${after.queued} still queued${r.bad > 0 || r.errors ? ` (non-2xx ${r.bad}${r.errors ? `, ${r.errors}` : ""})` : ""}`,
        );
        await settle();
      }
    }
    const m = (list, key) => median(list.map((r) => r[key]));
    console.log(
      `\n| table | HTTP req/s | p50 ms | p99 ms | the caller's tasks run/s |\n|---|---:|---:|---:|---:|\n| no backlog | ${fmt(m(rows.without, "rps"))} | ${fmt(m(rows.without, "p50"), 2)} | ${fmt(m(rows.without, "p99"), 2)} | ${fmt(m(rows.without, "ran"))} |\n| ${BACKLOG_OWNERS.toLocaleString("en-US")} owners at their cap | ${fmt(m(rows.with, "rps"))} | ${fmt(m(rows.with, "p50"), 2)} | ${fmt(m(rows.with, "p99"), 2)} | ${fmt(m(rows.with, "ran"))} |`,
    );
    console.log(
      `\nwith the backlog against without: HTTP ${fmt(m(rows.with, "rps") / m(rows.without, "rps"), 2)} ×, the caller's tasks run ${fmt(m(rows.with, "ran") / m(rows.without, "ran"), 2)} ×; ${ROUNDS} rounds of ${SECONDS} s each way (medians); load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}`,
    );
  } finally {
    await running.stop();
    await drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main);
