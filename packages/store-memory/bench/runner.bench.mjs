// Runner benchmark: what core's TaskRunner adds to the two writes of a task it runs, on the
// memory store. Both sides make the same writes through the same TaskService: a create that
// takes the lease, then the completion through the run's fence.
//   writes  the two writes alone, one caller after another (the baseline);
//   runner  `runner.start` (it creates the task and starts the handler, which returns at
//           once), the run completing the task in the background, as a task-creating
//           `tools/call` does without its HTTP and MCP layers.
// CALLERS owners (10) each keep one call in flight, as the HTTP benches' 10 callers do.
// The two sides run interleaved, BENCH_REPEATS (5) times, BENCH_TASKS (20,000) tasks each
// after 2,000 to warm up; CPU is this process's (user + system) over the timed tasks. Run
// with `node --expose-gc` (the package's `bench` script does): each timed phase starts after
// a full collection and ends with a young-generation one inside its time, so that it pays
// for its own garbage and not for the side before it (without that, one side's median moved
// by half from one run to the next).
// Runs against dist/ (build first). No target: it shows where a change to the run's own
// cost lands, without the HTTP benches' noise (±25 % from one run to the next).
import { createIdGenerator, owner, TaskRunner, TaskService } from "@mcp-tasks/core";
import { MemoryTaskStore } from "../dist/index.js";

const TASKS = Number(process.env.BENCH_TASKS ?? 20_000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
const CALLERS = Number(process.env.CALLERS ?? 10);
const WARMUP = 2_000;
const HOLDER = "bench-node";
const era = "2026-07-28";
const REQUEST = Object.freeze({ toolName: "zero", arguments: Object.freeze({}) });
const RESULT = Object.freeze({ content: [{ type: "text", text: "done" }] });
const zero = {
  name: "zero",
  inputSchema: { type: "object" },
  taskMode: "optional",
  run: async () => RESULT,
};
if (typeof globalThis.gc !== "function") {
  console.error("run with node --expose-gc");
  process.exit(2);
}

const callers = Array.from({ length: CALLERS }, (_, i) => owner({ principalId: `caller-${i}` }));

/** A fresh store, service and runner; `oneTask(caller)` makes one task the side's way. */
function side(kind) {
  const store = new MemoryTaskStore({
    sweepIntervalMs: 0,
    maxTasks: 10_000_000,
    maxTasksPerOwner: 10_000_000,
  });
  const service = new TaskService({ store, ids: createIdGenerator() });
  const runner = new TaskRunner({ service, tools: [zero], onError: () => {} });
  const oneTask =
    kind === "writes"
      ? async (caller) => {
          const task = await service.create(caller, {
            era,
            request: REQUEST,
            lease: { holder: HOLDER, durationMs: 60_000 },
          });
          const fence = { holder: HOLDER, fencingToken: task.execution.fencingToken };
          await service.forRun(caller, task.taskId, fence).complete(RESULT);
        }
      : (caller) => runner.start(caller, { era, request: REQUEST });
  return { store, runner, oneTask };
}

/** `n` tasks, each caller one in flight; resolves once every run has ended. */
async function make({ runner, oneTask }, n) {
  let next = 0;
  await Promise.all(
    callers.map(async (caller) => {
      while (next++ < n) await oneTask(caller);
    }),
  );
  await runner.drain();
}

async function measure(kind) {
  const s = side(kind);
  await make(s, WARMUP);
  globalThis.gc();
  const cpu = process.cpuUsage();
  const started = performance.now();
  await make(s, TASKS);
  globalThis.gc({ type: "minor" });
  const { user, system } = process.cpuUsage(cpu);
  const ms = performance.now() - started;
  await s.runner.shutdown({ drainMs: 1_000 });
  await s.store.close();
  if (s.runner.stats.started !== (kind === "runner" ? WARMUP + TASKS : 0)) {
    throw new Error(`${kind}: ${s.runner.stats.started} runs started`);
  }
  return { usPerTask: (user + system) / TASKS, perSec: (TASKS * 1000) / ms };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const runs = { writes: [], runner: [] };
for (let r = 0; r < REPEATS; r++) {
  for (const kind of ["writes", "runner"]) runs[kind].push(await measure(kind));
}
const ratios = runs.runner.map((x, i) => x.usPerTask / runs.writes[i].usPerTask);
const fmt = (n, digits = 0) => n.toFixed(digits);
console.log(
  `\nRunner on the memory store: ${TASKS.toLocaleString("en-US")} tasks a run, ${CALLERS} callers one in flight each, ${REPEATS} interleaved repeats (medians, min–max); Node ${process.version}\n`,
);
console.log("| side | tasks/s | CPU µs a task |");
console.log("|---|---:|---:|");
for (const kind of ["writes", "runner"]) {
  const list = runs[kind];
  const us = list.map((x) => x.usPerTask);
  console.log(
    `| ${kind === "writes" ? "the two writes alone" : "runner.start, run, completion"} | ${fmt(median(list.map((x) => x.perSec)))} | ${fmt(median(us), 1)} (${fmt(Math.min(...us), 1)}–${fmt(Math.max(...us), 1)}) |`,
  );
}
console.log(
  `\nCPU a task, runner against the writes alone: ${fmt(median(ratios), 2)} × (${fmt(Math.min(...ratios), 2)}–${fmt(Math.max(...ratios), 2)})`,
);
