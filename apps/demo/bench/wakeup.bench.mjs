// Wake-up latency benchmark: how long a change on one node takes to reach a waiter on another.
//
// Two demo apps in this process (one clock) on one PostgreSQL schema (a fresh schema of
// database `test`, DATABASE_URL overrides; dropped at the end, also on failure), each with
// its own store (own pool and LISTEN connection), so a change travels A's write → NOTIFY →
// B's LISTEN → B's waiter exactly as between two machines. Measured:
//
// - result: a 2025-11-25 `tasks/result` blocked on B for a task running on A; the time from
//   A's handler returning its result to B's answer having fully arrived at the client.
// - cancel: a 2026-07-28 `tasks/cancel` sent to B for a task running on A; the time from
//   sending the request to the abort signal of A's handler firing.
//
// References in the same run: the same two measures on one node (PostgreSQL store, and the
// memory store). The tool is bench-only (`bench_gate`, passed through createDemoApp's
// `tools`): its handler completes when the bench says so. Bounded: BENCH_WAKEUP_SAMPLES
// samples per measure (default 100) after 10 warm-up ones, each with a 10 s cap.

import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { createPostgresTaskStore, migrate } from "@mcp-tasks/store-drizzle";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import postgres from "postgres";
import { anonymousResolver, createDemoApp, listen } from "../dist/index.js";
import { runBench } from "./setup.mjs";
import { legacySession, modernBody, modernHeaders, post } from "./wire.mjs";

const SAMPLES = Number(process.env.BENCH_WAKEUP_SAMPLES ?? 100);
const WARMUP = 10;
const SAMPLE_CAP_MS = 10_000;
const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
/** How long the bench lets a `tasks/result` reach B and block before A completes the task. */
const BLOCK_SETTLE_MS = 30;

/** Handlers of `bench_gate` now running, by `key`: release them, or see when they abort. */
const gates = new Map();
const gateWaiters = new Map();

const benchGate = {
  name: "bench_gate",
  title: "Bench gate",
  description: "Runs until the benchmark releases it (bench-only).",
  inputSchema: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
  taskMode: "optional",
  run(args, ctx) {
    const key = String(args.key);
    return new Promise((resolve) => {
      const gate = {
        release: () => resolve({ content: [{ type: "text", text: `released ${key}` }] }),
        aborted: new Promise((onAbort) => {
          ctx.signal.addEventListener(
            "abort",
            () => {
              onAbort(performance.now());
              resolve({ content: [{ type: "text", text: `aborted ${key}` }] });
            },
            { once: true },
          );
        }),
      };
      gates.set(key, gate);
      gateWaiters.get(key)?.(gate);
    });
  },
};

function gateOf(key) {
  const running = gates.get(key);
  if (running) return Promise.resolve(running);
  return withCap(new Promise((resolve) => gateWaiters.set(key, resolve)), `handler of ${key}`);
}

function withCap(promise, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${what}: no answer in ${SAMPLE_CAP_MS} ms`)),
        SAMPLE_CAP_MS,
      );
    }),
  ]).finally(() => clearTimeout(timer));
}

async function startNode(store) {
  const app = createDemoApp({
    store,
    resolver: anonymousResolver,
    tools: [benchGate],
    legacy: true,
    onError: () => {},
  });
  const running = await listen(app, { host: "127.0.0.1", port: 0 });
  return { app, running, url: running.url };
}

let sequence = 0;

/** One `tasks/result` sample: task created and run on `a`, result awaited on `b`. */
async function resultSample(a, b) {
  const key = `r${++sequence}`;
  const created = await post(a.url, a.legacy, {
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "bench_gate", arguments: { key }, task: { ttl: 600_000 } },
  });
  const taskId = created.body?.result?.task?.taskId;
  if (typeof taskId !== "string") throw new Error(`no task: ${JSON.stringify(created.body)}`);
  const gate = await gateOf(key);
  const answered = post(b.url, b.legacy, {
    jsonrpc: "2.0",
    id: 3,
    method: "tasks/result",
    params: { taskId },
  }).then((answer) => ({ answer, at: performance.now() }));
  await new Promise((resolve) => setTimeout(resolve, BLOCK_SETTLE_MS));
  const completedAt = performance.now();
  gate.release();
  const { answer, at } = await withCap(answered, `tasks/result of ${key}`);
  gates.delete(key);
  const text = answer.body?.result?.content?.[0]?.text;
  if (text !== `released ${key}`) throw new Error(`tasks/result: ${JSON.stringify(answer.body)}`);
  return at - completedAt;
}

/** One `tasks/cancel` sample: task created and run on `a`, cancelled through `b`. */
async function cancelSample(a, b) {
  const key = `c${++sequence}`;
  const created = await post(
    a.url,
    modernHeaders("tools/call", "bench_gate"),
    modernBody("tools/call", { name: "bench_gate", arguments: { key } }),
  );
  const taskId = created.body?.result?.taskId;
  if (typeof taskId !== "string") throw new Error(`no task: ${JSON.stringify(created.body)}`);
  const gate = await gateOf(key);
  const sentAt = performance.now();
  const cancelled = await post(
    b.url,
    modernHeaders("tasks/cancel", taskId),
    modernBody("tasks/cancel", { taskId }),
  );
  if (cancelled.body?.error) throw new Error(`tasks/cancel: ${JSON.stringify(cancelled.body)}`);
  const abortedAt = await withCap(gate.aborted, `abort of ${key}`);
  gates.delete(key);
  return abortedAt - sentAt;
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function measure(label, sample, a, b) {
  for (let i = 0; i < WARMUP; i++) await sample(a, b);
  const times = [];
  for (let i = 0; i < SAMPLES; i++) times.push(await sample(a, b));
  times.sort((x, y) => x - y);
  const row = {
    label,
    n: times.length,
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    max: times[times.length - 1],
  };
  console.log(
    `${label}: p50 ${row.p50.toFixed(2)} ms, p99 ${row.p99.toFixed(2)} ms, max ${row.max.toFixed(2)} ms (n=${row.n})`,
  );
  return row;
}

async function scenario(name, a, b) {
  a.legacy = await legacySession(a.url, "bench-wakeup");
  b.legacy = b === a ? a.legacy : await legacySession(b.url, "bench-wakeup");
  return [
    await measure(`${name}: blocked tasks/result wakes`, resultSample, a, b),
    await measure(`${name}: tasks/cancel reaches the handler`, cancelSample, a, b),
  ];
}

async function main() {
  const started = performance.now();
  const rows = [];
  const schema = `bench_wakeup_${process.pid}_${Date.now().toString(36)}`;
  const admin = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
  const nodes = [];
  try {
    let pgReady = false;
    try {
      await migrate(DATABASE_URL, { schema });
      pgReady = true;
    } catch (error) {
      console.log(`PostgreSQL unavailable (${error?.message ?? error}): its rows are skipped`);
    }
    if (pgReady) {
      const open = () => createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 4 });
      const a = await startNode(await open());
      const b = await startNode(await open());
      nodes.push(a, b);
      rows.push(...(await scenario("two nodes, PostgreSQL (A runs, B waits)", a, b)));
      rows.push(...(await scenario("one node, PostgreSQL", a, a)));
    }
    const memory = await startNode(new MemoryTaskStore());
    nodes.push(memory);
    rows.push(...(await scenario("one node, memory store", memory, memory)));
  } finally {
    for (const node of nodes) {
      await node.running.stop().catch(() => {}); // closes the app and its store too
    }
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await admin.end({ timeout: 2 });
  }
  console.log();
  console.log(
    `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "CPU"}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}, ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  console.log();
  console.log("| wake-up | p50 ms | p99 ms | max ms | samples |");
  console.log("|---|---:|---:|---:|---:|");
  for (const r of rows) {
    console.log(
      `| ${r.label} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.max.toFixed(2)} | ${r.n} |`,
    );
  }
}

runBench(main);
