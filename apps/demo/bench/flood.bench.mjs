// One owner floods the demo on PostgreSQL with task-creating 2026 `tools/call`s of tasks
// that keep running (`slow_compute`, 600 s), so the owner sits at the runner's per-owner cap
// (8 of 32 slots) and every further task is created queued. Reported per round: req/s, p50
// and p99 (`wrk`, 1 thread, 10 connections). What it shows: the cost of a create that
// cannot run at once.
//
// Run after a build: `cd apps/demo && node bench/flood.bench.mjs`
// (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test; a fresh schema, dropped at
// the end; BENCH_ROUNDS 3, BENCH_SECONDS 3.)
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { freshPostgresStore, listenDemo } from "./setup.mjs";
import { modernBody, modernHeaders } from "./wire.mjs";
import { ensureWrk, fmt, luaScript, median, runWrk } from "./wrk.mjs";

const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const MANY = 10_000_000;

async function main() {
  ensureWrk();
  const schema = `bench_flood_${process.pid}_${Date.now().toString(36)}`;
  const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-flood-bench-"));
  const { store, drop } = await freshPostgresStore(DATABASE_URL, schema, {
    maxTasks: MANY,
    maxTasksPerOwner: MANY,
  });
  const running = await listenDemo(store);
  try {
    const script = luaScript(dir, "flood", {
      headers: modernHeaders("tools/call", "slow_compute"),
      body: modernBody("tools/call", { name: "slow_compute", arguments: { seconds: 600 } }),
    });
    const rounds = [];
    for (let i = 0; i < ROUNDS; i++) {
      const r = await runWrk(running.url, script, SECONDS);
      rounds.push(r);
      console.log(
        `round ${i + 1}: ${fmt(r.rps)} req/s, p50 ${fmt(r.p50, 1)} ms, p99 ${fmt(r.p99, 1)} ms, non-2xx ${r.bad}${r.errors ? `, ${r.errors}` : ""}`,
      );
    }
    console.log(
      `median: ${fmt(median(rounds.map((r) => r.rps)))} req/s, p50 ${fmt(median(rounds.map((r) => r.p50)), 1)} ms; load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}`,
    );
  } finally {
    await running.stop();
    await store.close();
    await drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
