// Where one kind of request spends the demo server's CPU, function by function: the demo in
// this process, `wrk` (1 thread, 10 connections) against it for BENCH_SECONDS (default 5)
// after a 2 s warm-up, and the inspector's sampling profiler (every 100 µs) over the run.
// Prints each function's share of the samples, its own time (self) and with what it calls
// (inclusive), the largest first. A change of a few µs a request does not show in the HTTP
// bench's rates on a shared machine (they move by 20–40 % from run to run); a function's
// share of the profile does.
//
// BENCH_PROFILE picks the request: `mem-call` (default; a 2026-07-28 task-creating
// `tools/call` on the memory store), `legacy-call` (a 2025-11-25 `tools/call` with
// `params.task` in a session, memory store) or `pg-call` (the 2026 call on PostgreSQL, a
// fresh schema of DATABASE_URL, dropped afterwards). BENCH_TOP (default 40) rows per table;
// BENCH_PROFILE_OUT writes the raw `.cpuprofile` too (for Chrome's DevTools).
//
//   node bench/profile.mjs
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { freshPostgresStore, listenDemo, runBench } from "./setup.mjs";
import { legacySession, modernBody, modernHeaders } from "./wire.mjs";
import { ensureWrk, luaScript, runWrk, usPerRequest } from "./wrk.mjs";

const KIND = process.env.BENCH_PROFILE ?? "mem-call";
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const TOP = Number(process.env.BENCH_TOP ?? 40);
const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const MANY = 10_000_000;

/** The store, and what removes what it made. */
async function openStore() {
  if (KIND !== "pg-call") {
    const store = new MemoryTaskStore({
      sweepIntervalMs: 0,
      maxTasks: MANY,
      maxTasksPerOwner: MANY,
    });
    return { store, drop: async () => {} };
  }
  return freshPostgresStore(DATABASE_URL, `bench_profile_${process.pid}`, {
    maxTasks: MANY,
    maxTasksPerOwner: MANY,
  });
}

/** The request wrk sends, for KIND. */
async function requestFor(url) {
  if (KIND === "legacy-call") {
    const headers = await legacySession(url, "bench-profile");
    const params = { name: "slow_compute", arguments: { seconds: 0 }, task: { ttl: 60_000 } };
    return { headers, body: { jsonrpc: "2.0", id: 4, method: "tools/call", params } };
  }
  if (KIND !== "mem-call" && KIND !== "pg-call") throw new Error(`unknown BENCH_PROFILE ${KIND}`);
  return {
    headers: modernHeaders("tools/call", "slow_compute"),
    body: modernBody("tools/call", { name: "slow_compute", arguments: { seconds: 0 } }),
  };
}

/** Self and inclusive time per function (name, file, line), in µs, and the total. */
function timesByFunction(profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parentOf.set(child, node.id);
  const sampled = new Map();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    sampled.set(id, (sampled.get(id) ?? 0) + dt);
    total += dt;
  });
  const nameOf = ({ callFrame: f }) =>
    `${f.functionName || "(anonymous)"} ${f.url.split("/").slice(-2).join("/")}:${f.lineNumber + 1}`;
  const self = new Map();
  const inclusive = new Map();
  for (const [id, dt] of sampled) {
    const name = nameOf(byId.get(id));
    self.set(name, (self.get(name) ?? 0) + dt);
    // Each function once per sample, however deep it recurses.
    const seen = new Set();
    for (let at = id; at !== undefined; at = parentOf.get(at)) {
      const caller = nameOf(byId.get(at));
      if (seen.has(caller)) continue;
      seen.add(caller);
      inclusive.set(caller, (inclusive.get(caller) ?? 0) + dt);
    }
  }
  return { self, inclusive, total };
}

function printTop(title, times, total) {
  console.log(`\n| ${title} | share |\n|---|---:|`);
  const rows = [...times].sort((a, b) => b[1] - a[1]).slice(0, TOP);
  for (const [name, dt] of rows)
    console.log(`| \`${name}\` | ${((100 * dt) / total).toFixed(1)} % |`);
}

async function main() {
  ensureWrk();
  const { store, drop } = await openStore();
  const running = await listenDemo(store, { legacy: true });
  const workDir = mkdtempSync(join(tmpdir(), "mcp-tasks-profile-"));
  const session = new Session();
  try {
    const script = luaScript(workDir, KIND, await requestFor(running.url));
    await runWrk(running.url, script, 2); // warm-up
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 100 });
    await session.post("Profiler.start");
    const run = await runWrk(running.url, script, SECONDS);
    const { profile } = await session.post("Profiler.stop");
    if (process.env.BENCH_PROFILE_OUT) {
      writeFileSync(process.env.BENCH_PROFILE_OUT, JSON.stringify(profile));
    }
    const { self, inclusive, total } = timesByFunction(profile);
    console.log(
      `${KIND}: ${run.rps.toFixed(0)} req/s, ${usPerRequest(run).toFixed(0)} µs of this process's CPU a request (profiler attached), ${SECONDS} s, Node ${process.version}`,
    );
    printTop("function (self)", self, total);
    printTop("function (inclusive)", inclusive, total);
  } finally {
    session.disconnect();
    await running.stop();
    await drop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

runBench(main);
