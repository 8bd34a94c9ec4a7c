import { Client as Sdk1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as Sdk1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import {
  DATABASE_URL,
  type DemoProcess,
  dropSchema,
  healthUrl,
  killAll,
  leaseHolder,
  metricsUrl,
  schemaName,
  startProcess,
} from "./helpers/process.js";
import { rpc } from "./helpers/wire.js";

/**
 * Durable execution across real demo processes on one PostgreSQL schema (a fresh one per
 * test): the task table is the queue, a node runs a task under a renewed lease with a
 * fencing token, and a task whose node is lost (kill -9, stalled past its lease) is re-run
 * elsewhere when its tool allows retries (`durable_job`), else failed "Worker lost"
 * (`slow_compute`). SIGTERM drains, then hands unfinished tasks back to the queue.
 */

const TOKEN = "alice-token";
const ENV = { DATABASE_URL };
const TERMINAL = ["completed", "failed", "cancelled"];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type Task = Record<string, unknown>;

/** One node's arguments on `schema` (port 0: a free port each start). */
const METRICS_TOKEN = "durable-metrics-token";

function nodeArgs(schema: string, ...extra: string[]): string[] {
  return [
    "--store",
    "postgres",
    "--schema",
    schema,
    "--port",
    "0",
    "--tokens",
    `${TOKEN}=alice@acme`,
    // /health names the lease holder only to the bearer of the metrics token.
    "--metrics-token",
    METRICS_TOKEN,
    ...extra,
  ];
}

/** Creates a task with a 2026-07-28 task-creating `tools/call`; returns its id. */
async function createTask(url: string, name: string, args: Record<string, unknown>) {
  const created = await rpc(url, "tools/call", { name, arguments: args }, { token: TOKEN });
  const result = created.body?.result;
  if (result?.resultType !== "task" || typeof result.taskId !== "string") {
    throw new Error(`${name} created no task: ${created.status} ${JSON.stringify(created.body)}`);
  }
  return result.taskId;
}

/** `tasks/get` through `url`. */
async function getTask(url: string, taskId: string): Promise<Task> {
  const { body } = await rpc(url, "tasks/get", { taskId }, { token: TOKEN });
  if (!body?.result) throw new Error(`tasks/get ${taskId} failed: ${JSON.stringify(body)}`);
  return body.result;
}

interface Seen {
  at: number;
  status: string;
  statusMessage: string | undefined;
}

/**
 * Polls `tasks/get` through `url` every `everyMs` until `done` holds (bounded), recording
 * every status and status message seen on the way.
 */
async function watchTask(
  url: string,
  taskId: string,
  options: { everyMs?: number; timeoutMs: number; done?: (task: Task) => boolean },
): Promise<{ task: Task; at: number; seen: Seen[] }> {
  const done = options.done ?? ((t: Task) => TERMINAL.includes(String(t.status)));
  const deadline = Date.now() + options.timeoutMs;
  const seen: Seen[] = [];
  for (;;) {
    const task = await getTask(url, taskId);
    const at = Date.now();
    seen.push({
      at,
      status: String(task.status),
      statusMessage: task.statusMessage as string | undefined,
    });
    if (done(task)) return { task, at, seen };
    if (at > deadline) {
      throw new Error(
        `task ${taskId} not done within ${options.timeoutMs} ms; last: ${JSON.stringify(task)}`,
      );
    }
    await sleep(options.everyMs ?? 100);
  }
}

function resultText(task: Task): string | undefined {
  const content = (task.result as { content?: Array<{ text?: string }> } | undefined)?.content;
  return content?.[0]?.text;
}

/** The node's `/metrics` text (the metrics token is required there). */
async function metricsOf(node: DemoProcess): Promise<string> {
  const response = await fetch(metricsUrl(node.url), {
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  });
  expect(response.status).toBe(200);
  return response.text();
}

async function health(node: DemoProcess): Promise<Record<string, unknown>> {
  const response = await fetch(healthUrl(node.url), {
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

function isAlive(node: DemoProcess): boolean {
  return node.child.exitCode === null && node.child.signalCode === null;
}

function signal(node: DemoProcess, name: NodeJS.Signals): void {
  if (node.child.pid === undefined) throw new Error("no pid");
  process.kill(node.child.pid, name);
}

/** Index of the first status message of attempt `n` in `seen`, or -1. */
function firstOfAttempt(seen: readonly Seen[], n: number): number {
  return seen.findIndex((s) => s.statusMessage?.startsWith(`Attempt ${n}:`));
}

describe("durable execution across demo processes on PostgreSQL", () => {
  const schemas: string[] = [];
  /** A fresh schema for this test, dropped after it. */
  function freshSchema(prefix: string): string {
    const schema = schemaName(prefix);
    schemas.push(schema);
    return schema;
  }
  afterEach(async () => {
    await killAll();
    for (const schema of schemas.splice(0)) await dropSchema(schema);
  });

  it("failover: kill -9 of the node running a durable_job re-runs it on the other node", async () => {
    const schema = freshSchema("demo_durable_failover");
    const args = nodeArgs(schema, "--lease-ms", "1500");
    const a = await startProcess(args, { env: ENV });
    const b = await startProcess(args, { env: ENV });
    const holderB = leaseHolder(b);
    expect(leaseHolder(a)).not.toBe(holderB);

    const taskId = await createTask(a.url, "durable_job", { seconds: 3 });
    // A claimed it at creation and runs it: its first step is visible through B.
    const started = await watchTask(b.url, taskId, {
      timeoutMs: 5_000,
      done: (t) => String(t.statusMessage).startsWith("Attempt 1: step 1 of 3"),
    });
    expect(started.task.status).toBe("working");
    expect((await health(a)).running).toBe(1);

    const killedAt = Date.now();
    expect(await a.kill("SIGKILL")).toBeNull();
    const { task, at, seen } = await watchTask(b.url, taskId, { timeoutMs: 15_000 });
    const statuses = [...new Set(seen.map((s) => s.status))];
    expect(statuses, JSON.stringify(seen)).toEqual(["working", "completed"]);
    expect(task.status).toBe("completed");
    expect(resultText(task)).toBe(`done by ${holderB} on attempt 2`);
    // Lease (1.5 s) + run (3 s) + 2 s.
    expect(at - killedAt).toBeLessThanOrEqual(1_500 + 3_000 + 2_000);
    // Once the re-run reported, nothing of the first run shows up again.
    const second = firstOfAttempt(seen, 2);
    expect(second, JSON.stringify(seen)).toBeGreaterThanOrEqual(0);
    expect(seen.slice(second).some((s) => s.statusMessage?.startsWith("Attempt 1:"))).toBe(false);
  }, 30_000);

  it("failover: kill -9 of the node running a slow_compute (no retries) fails it Worker lost", async () => {
    const schema = freshSchema("demo_durable_lost");
    const args = nodeArgs(schema, "--lease-ms", "1500");
    const a = await startProcess(args, { env: ENV });
    const b = await startProcess(args, { env: ENV });

    const taskId = await createTask(a.url, "slow_compute", { seconds: 3, label: "once" });
    await watchTask(b.url, taskId, {
      timeoutMs: 5_000,
      done: (t) => String(t.statusMessage).startsWith("Computing"),
    });
    const killedAt = Date.now();
    expect(await a.kill("SIGKILL")).toBeNull();
    const { task, at, seen } = await watchTask(b.url, taskId, { timeoutMs: 15_000 });
    expect([...new Set(seen.map((s) => s.status))], JSON.stringify(seen)).toEqual([
      "working",
      "failed",
    ]);
    expect(task.error).toMatchObject({ code: -32603 });
    expect(String((task.error as { message?: unknown }).message)).toMatch(/^Worker lost/);
    // Lease (1.5 s) + one orphan scan (1 s) + 1 s; never run again.
    expect(at - killedAt).toBeLessThanOrEqual(1_500 + 1_000 + 1_000);
    const metricsOfB = await metricsOf(b);
    expect(metricsOfB).toMatch(/^mcp_tasks_runs_started_total 0$/m);
  }, 30_000);

  it("fencing: a node stalled past its lease (SIGSTOP) cannot overwrite the re-run's outcome", async () => {
    const schema = freshSchema("demo_durable_fence");
    const args = nodeArgs(schema, "--lease-ms", "1500");
    const a = await startProcess(args, { env: ENV });
    const b = await startProcess(args, { env: ENV });
    const holderB = leaseHolder(b);

    const taskId = await createTask(a.url, "durable_job", { seconds: 4 });
    const started = await watchTask(b.url, taskId, {
      timeoutMs: 5_000,
      done: (t) => String(t.statusMessage).startsWith("Attempt 1: step 1 of 4"),
    });
    // A's run would take 4 s of its own time from here (at most; it started a moment ago).
    signal(a, "SIGSTOP");
    const stoppedAt = Date.now();
    const stopMs = 3_000;
    const cont = sleep(stopMs).then(() => signal(a, "SIGCONT"));
    const { task, seen } = await watchTask(b.url, taskId, { timeoutMs: 15_000 });
    await cont;
    expect([...new Set(seen.map((s) => s.status))], JSON.stringify(seen)).toEqual([
      "working",
      "completed",
    ]);
    expect(resultText(task)).toBe(`done by ${holderB} on attempt 2`);
    // B took over while A was still stopped, and after A resumed, none of A's (stale)
    // status messages landed over B's run.
    const second = firstOfAttempt(seen, 2);
    expect(second, JSON.stringify(seen)).toBeGreaterThanOrEqual(0);
    expect(seen[second]?.at ?? 0).toBeLessThan(stoppedAt + stopMs);
    expect(seen.slice(second).some((s) => s.statusMessage?.startsWith("Attempt 1:"))).toBe(false);

    // Past the moment A's old run would have finished (4 s of run + the 3 s stall + 1 s),
    // the stored task is still exactly B's outcome.
    const aWouldFinish = started.at + 4_000 + stopMs + 1_000;
    await sleep(Math.max(0, aWouldFinish - Date.now()));
    const later = await getTask(b.url, taskId);
    expect(later).toEqual(task);
    expect(await getTask(a.url, taskId)).toEqual(task);
    // A survived its superseded run and is idle.
    expect(isAlive(a)).toBe(true);
    expect(await health(a)).toMatchObject({ status: "ok", claiming: true, running: 0 });
    const metrics = await metricsOf(a);
    const superseded = /^mcp_tasks_runs_superseded_total (\d+)$/m.exec(metrics);
    expect(superseded, metrics).not.toBeNull();
    expect(Number(superseded?.[1])).toBeGreaterThanOrEqual(1);
  }, 30_000);

  it("SIGTERM: a task still running after the drain time is handed back and re-run at once", async () => {
    const schema = freshSchema("demo_durable_drain");
    // A 30 s lease: only a hand-back, not the lease running out, lets B take over early.
    const args = nodeArgs(schema, "--lease-ms", "30000");
    const a = await startProcess(args, { env: ENV });
    const b = await startProcess(args, { env: ENV });
    const holderB = leaseHolder(b);

    const taskId = await createTask(a.url, "durable_job", { seconds: 7 });
    await watchTask(b.url, taskId, {
      timeoutMs: 5_000,
      done: (t) => String(t.statusMessage).startsWith("Attempt 1: step 1 of 7"),
    });
    const termAt = Date.now();
    expect(await a.kill("SIGTERM")).toBe(0);
    const exitedAt = Date.now();
    // The 5 s drain was waited out (the task needed longer), then the task handed back.
    expect(exitedAt - termAt).toBeGreaterThanOrEqual(4_500);
    // A ran steps 1-6 meanwhile; B starts over at step 1.
    const rerun = await watchTask(b.url, taskId, {
      timeoutMs: 5_000,
      done: (t) => /^Attempt \d+: step 1 of 7$/.test(String(t.statusMessage)),
    });
    expect(rerun.task.status).toBe("working");
    // "At once": well within the 30 s lease.
    expect(rerun.at - exitedAt).toBeLessThan(2_000);
    const { task, seen } = await watchTask(b.url, taskId, { timeoutMs: 12_000 });
    expect([...new Set(seen.map((s) => s.status))], JSON.stringify(seen)).toEqual([
      "working",
      "completed",
    ]);
    // The handed-back run does not count as an attempt.
    expect(resultText(task)).toBe(`done by ${holderB} on attempt 1`);
  }, 40_000);

  it("roles: an http node queues tasks, workers run them; with no worker they wait Queued", async () => {
    const schema = freshSchema("demo_durable_roles");
    const h = await startProcess(nodeArgs(schema, "--role", "http"), { env: ENV });
    const w = await startProcess(nodeArgs(schema, "--role", "worker"), { env: ENV });
    expect(w.out()).toMatch(
      /^worker on http:\/\/127\.0\.0\.1:\d+ \(store: postgres .*; role: worker, concurrency \d+\)$/m,
    );
    expect(w.url).toBe(w.base);
    expect(await health(h)).toMatchObject({ role: "http", claiming: false, running: 0 });
    expect(await health(w)).toMatchObject({
      role: "worker",
      holder: leaseHolder(w),
      claiming: true,
    });
    // A worker serves no MCP.
    expect((await rpc(`${w.base}/mcp`, "tools/list", {}, { token: TOKEN })).status).toBe(404);

    const first = await Promise.all(
      [1, 2].map(() => createTask(h.url, "durable_job", { seconds: 1 })),
    );
    for (const taskId of first) {
      const { task } = await watchTask(h.url, taskId, { timeoutMs: 8_000 });
      expect(task.status).toBe("completed");
      expect(resultText(task)).toBe(`done by ${leaseHolder(w)} on attempt 1`);
    }

    expect(await w.kill("SIGTERM")).toBe(0);
    const waiting = await Promise.all(
      [1, 2].map(() => createTask(h.url, "durable_job", { seconds: 1 })),
    );
    const until = Date.now() + 2_000;
    while (Date.now() < until) {
      for (const taskId of waiting) {
        expect(await getTask(h.url, taskId)).toMatchObject({
          status: "working",
          statusMessage: expect.stringMatching(/^Queued: \d+ ahead of you$/),
        });
      }
      await sleep(200);
    }

    const w2 = await startProcess(nodeArgs(schema, "--role", "worker"), { env: ENV });
    const startedAt = Date.now();
    for (const taskId of waiting) {
      const { task, at } = await watchTask(h.url, taskId, { timeoutMs: 8_000 });
      expect(task.status).toBe("completed");
      expect(resultText(task)).toBe(`done by ${leaseHolder(w2)} on attempt 1`);
      expect(at - startedAt).toBeLessThan(4_000);
    }
  }, 40_000);

  it("rolling restart under load: SIGTERM and restart each node; every task completes", async () => {
    const schema = freshSchema("demo_durable_rolling");
    const args = nodeArgs(schema, "--lease-ms", "2000");
    const a = await startProcess(args, { env: ENV });
    const b = await startProcess(args, { env: ENV });
    // What a load balancer routes to: a node leaves before it is sent SIGTERM.
    const up: DemoProcess[] = [a, b];
    const created: string[] = [];
    const createErrors: string[] = [];
    let stopping = false;
    const client = (async () => {
      for (let i = 0; !stopping && i < 60; i++) {
        const node = up[i % up.length];
        if (node !== undefined) {
          try {
            created.push(await createTask(node.url, "durable_job", { seconds: 1 }));
          } catch (error) {
            createErrors.push(String(error));
          }
        }
        await sleep(150);
      }
    })();

    const restart = async (node: DemoProcess) => {
      await sleep(700);
      up.splice(up.indexOf(node), 1);
      expect(await node.kill("SIGTERM")).toBe(0);
      expect(node.out()).toContain("SIGTERM: shutting down");
      const again = await startProcess(args, { env: ENV });
      up.push(again);
      return again;
    };
    await restart(a);
    const b2 = await restart(b);
    await sleep(700);
    stopping = true;
    await client;

    expect(createErrors).toEqual([]);
    expect(created.length).toBeGreaterThanOrEqual(20);
    const deadline = Date.now() + 20_000;
    let tasks: Task[] = [];
    for (;;) {
      tasks = await Promise.all(created.map((taskId) => getTask(b2.url, taskId)));
      if (tasks.every((t) => TERMINAL.includes(String(t.status)))) break;
      if (Date.now() > deadline) break;
      await sleep(200);
    }
    const notCompleted = tasks.filter((t) => t.status !== "completed");
    expect(notCompleted, JSON.stringify(notCompleted)).toEqual([]);
    // Drained or handed back, never counted as a lost worker's attempt.
    const reruns = tasks.filter((t) => !resultText(t)?.endsWith("on attempt 1"));
    expect(reruns.map(resultText)).toEqual([]);
  }, 60_000);

  it("concurrency: --concurrency 2 runs at most two handlers at once", async () => {
    const schema = freshSchema("demo_durable_concurrency");
    // One owner's tasks: the per-owner cap (a quarter of the slots) is off for this test.
    const node = await startProcess(
      nodeArgs(schema, "--concurrency", "2", "--owner-running-cap", "off"),
      { env: ENV },
    );
    let peak = 0;
    let samples = 0;
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const running = Number((await health(node)).running);
        peak = Math.max(peak, running);
        samples++;
        await sleep(50);
      }
    })();
    try {
      const startedAt = Date.now();
      const ids: string[] = [];
      for (let i = 0; i < 10; i++)
        ids.push(await createTask(node.url, "durable_job", { seconds: 1 }));
      let last = 0;
      for (const taskId of ids) {
        const { task, at } = await watchTask(node.url, taskId, { timeoutMs: 15_000 });
        expect(task.status).toBe("completed");
        last = Math.max(last, at);
      }
      expect(peak).toBeLessThanOrEqual(2);
      expect(peak).toBe(2);
      expect(samples).toBeGreaterThan(20);
      // Ten one-second jobs, two at a time.
      expect(last - startedAt).toBeGreaterThanOrEqual(4_500);
    } finally {
      polling = false;
      await poller;
    }
  }, 30_000);

  it("both eras: a 2025-11-25 tasks/result blocked on B returns the re-run after kill -9 of A", async () => {
    const schema = freshSchema("demo_durable_legacy");
    const args = nodeArgs(schema, "--lease-ms", "1500");
    const a = await startProcess(args, { env: ENV });
    const b = await startProcess(args, { env: ENV });
    const holderB = leaseHolder(b);
    const connect = async (url: string) => {
      const client = new Sdk1Client(
        { name: "sdk1-durable", version: "1.0.0" },
        { capabilities: {} },
      );
      await client.connect(
        new Sdk1Transport(new URL(url), {
          requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
        }),
      );
      return client;
    };
    const onA = await connect(a.url);
    const onB = await connect(b.url);
    try {
      const created = await onA.request(
        { method: "tools/call", params: { name: "durable_job", arguments: { seconds: 3 } } },
        CreateTaskResultSchema,
        { task: { ttl: 60_000 } },
      );
      const taskId = created.task.taskId;
      // Blocks on B until the task ends, whichever node runs it.
      const result = onB.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, {
        timeout: 20_000,
      });
      result.catch(() => {}); // awaited below; not "unhandled" meanwhile
      for (let i = 0; ; i++) {
        const task = await onB.experimental.tasks.getTask(taskId);
        if (String(task.statusMessage).startsWith("Attempt 1: step 1")) break;
        if (i > 50) throw new Error(`A did not start the task: ${JSON.stringify(task)}`);
        await sleep(100);
      }
      const killedAt = Date.now();
      expect(await a.kill("SIGKILL")).toBeNull();
      const answer = await result;
      expect(answer.content).toEqual([{ type: "text", text: `done by ${holderB} on attempt 2` }]);
      expect(Date.now() - killedAt).toBeLessThanOrEqual(1_500 + 3_000 + 2_000);
    } finally {
      await onB.close();
      await onA.close().catch(() => {});
    }
  }, 30_000);
});
