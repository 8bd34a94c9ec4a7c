import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpcAnswer } from "./helpers/fault-invariants.js";
import { type FaultServer, type ServerMemory, startFaultServer } from "./helpers/fault-process.js";
import { sendRaw } from "./helpers/raw-http.js";
import { legacyInitialize } from "./helpers/wire.js";

/**
 * Soak (issue #14 §3): FAULT_SOAK_TASKS (default 100 000) tasks created, polled and
 * expired through HTTP on the memory store, against the demo in its own process; once they
 * have expired, the server's resident memory after GC is within 20 % of where it started.
 *
 * Tasks are created by 2025-11-25 clients (the era whose `tools/call` carries a requested
 * `task.ttl`, here 3 s), in JSON-RPC batches of 100 over 4 connections for 16 owners, and
 * each is polled once with `tasks/get` (also batched). "Start" is measured after a warm-up
 * of FAULT_SOAK_WARMUP tasks through the same path has expired too, so JIT code, session
 * state and the allocator's pools are in the baseline and only what the soak leaves
 * behind counts. The store sweeps every second (the binary's memory store: every minute).
 * The loop is bounded in count and in time (FAULT_SOAK_MS, default 150 s); the test
 * prints how many tasks it ran and how long it took.
 */
const TASKS = Number(process.env.FAULT_SOAK_TASKS || 100_000);
const WARMUP = Number(process.env.FAULT_SOAK_WARMUP || 5_000);
const TIME_LIMIT_MS = Number(process.env.FAULT_SOAK_MS || 150_000);
const BATCH = 100;
const CONNECTIONS = 4;
const OWNERS = 16;
const TTL_MS = 3_000;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

const tokens: Record<string, string> = {};
for (let i = 0; i < OWNERS; i++) tokens[`soak-${i}`] = `soaker${i}@soak`;

interface Session {
  token: string;
  id: string;
}

function post(url: string, session: Session | undefined, token: string, body: unknown) {
  return sendRaw(
    url,
    {
      method: "POST",
      path: "/mcp",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${token}`,
        ...(session && { "mcp-session-id": session.id, "mcp-protocol-version": "2025-11-25" }),
      },
      body: JSON.stringify(body),
    },
    { headersMs: 30_000, bodyMs: 30_000 },
  );
}

/** Every message of a JSON or SSE answer. */
function messages(body: string, type: string): Array<Record<string, unknown>> {
  if (type.includes("text/event-stream")) {
    return body
      .split(/\r?\n/)
      .filter((line) => line.startsWith("data:"))
      .map((line) => JSON.parse(line.slice(5)));
  }
  const parsed = JSON.parse(body);
  return Array.isArray(parsed) ? parsed : [parsed];
}

async function batch(url: string, session: Session, calls: unknown[]) {
  const outcome = await post(url, session, session.token, calls);
  if (outcome.kind !== "answer" || outcome.status !== 200) {
    throw new Error(`batch failed: ${JSON.stringify(outcome).slice(0, 500)}`);
  }
  return messages(outcome.body, String(outcome.headers["content-type"] ?? ""));
}

/** Creates `count` tasks and polls each once; bounded by `deadline`. Counts what happened. */
async function churn(url: string, sessions: Session[], count: number, deadline: number) {
  const tally = { created: 0, polled: 0, expiredFirst: 0, failed: 0, refused: 0, firstId: "" };
  let next = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < count && Date.now() < deadline) {
        const start = next;
        next += BATCH;
        const size = Math.min(BATCH, count - start);
        const session = sessions[(start / BATCH) % sessions.length] as Session;
        const created = await batch(
          url,
          session,
          Array.from({ length: size }, (_, i) => ({
            jsonrpc: "2.0",
            id: start + i,
            method: "tools/call",
            params: {
              name: "slow_compute",
              arguments: { seconds: 0 },
              task: { ttl: TTL_MS },
            },
          })),
        );
        const ids: string[] = [];
        for (const m of created) {
          const id = (m.result as { task?: { taskId?: string } } | undefined)?.task?.taskId;
          if (id) ids.push(id);
          else tally.refused++;
        }
        tally.created += ids.length;
        if (!tally.firstId && ids[0]) tally.firstId = ids[0];
        if (ids.length === 0) continue;
        const polled = await batch(
          url,
          session,
          ids.map((taskId, i) => ({
            jsonrpc: "2.0",
            id: i,
            method: "tasks/get",
            params: { taskId },
          })),
        );
        for (const m of polled) {
          if (m.result !== undefined) tally.polled++;
          // Already expired (a slow machine): the answer a client gets for an expired task.
          else if ((m.error as { code?: number } | undefined)?.code === -32602)
            tally.expiredFirst++;
          else tally.failed++;
        }
      }
    }),
  );
  return tally;
}

describe("soak: many tasks through HTTP on the memory store", () => {
  let server: FaultServer;
  let sessions: Session[];

  beforeAll(async () => {
    server = await startFaultServer({ tokens, sweepIntervalMs: 1_000, pollIntervalMs: 500 });
    sessions = [];
    for (const token of Object.keys(tokens)) {
      const outcome = await post(server.url, undefined, token, legacyInitialize("soak"));
      const id = outcome.kind === "answer" ? String(outcome.headers["mcp-session-id"] ?? "") : "";
      if (!id) throw new Error(`no session: ${JSON.stringify(outcome).slice(0, 300)}`);
      const session = { token, id };
      await post(server.url, session, token, {
        jsonrpc: "2.0",
        method: "notifications/initialized",
      });
      sessions.push(session);
    }
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
  });

  /** Waits (bounded) until the store holds no task, then measures after GC. */
  async function settled(): Promise<ServerMemory> {
    for (let i = 0; i < 100; i++) {
      const memory = await server.memory();
      if (memory.tasks === 0) return memory;
      await sleep(300);
    }
    throw new Error(`tasks did not expire: ${(await server.memory()).tasks} still held`);
  }

  it("resident memory returns to within 20 % of its start once the tasks expired", async () => {
    const cold = await server.memory();
    const warm = await churn(server.url, sessions, WARMUP, Date.now() + 60_000);
    expect(warm.created).toBe(WARMUP);
    const start = await settled();

    const began = Date.now();
    const tally = await churn(server.url, sessions, TASKS, began + TIME_LIMIT_MS);
    const seconds = (Date.now() - began) / 1000;
    const peak = await server.rss();
    const held = (await server.memory()).tasks;

    // Expired means gone for the client too.
    const first = await post(server.url, sessions[0], (sessions[0] as Session).token, {
      jsonrpc: "2.0",
      id: 1,
      method: "tasks/get",
      params: { taskId: tally.firstId },
    });
    expect(rpcAnswer(first, 1).error?.code).toBe(-32602);

    let end = await settled();
    // The allocator gives pages back lazily: look again for a few seconds (bounded).
    for (let i = 0; i < 10 && end.rss > start.rss * 1.2; i++) {
      await sleep(1_000);
      end = await server.memory();
    }
    console.log(
      `soak: ${tally.created} tasks created and ${tally.polled} polled in ${seconds.toFixed(1)} s ` +
        `(${Math.round(tally.created / seconds)}/s; ${tally.refused} refused, ${tally.expiredFirst} ` +
        `expired before their poll; ${held} held at the end); ` +
        `rss ${mb(cold.rss)} cold, ${mb(start.rss)} after the ${WARMUP}-task warm-up, ` +
        `${mb(peak)} peak, ${mb(end.rss)} after expiry; heap ${mb(start.heapUsed)} → ${mb(end.heapUsed)}`,
    );
    expect(server.alive()).toBe(true);
    expect(tally.refused).toBe(0);
    expect(tally.failed).toBe(0);
    expect(tally.polled + tally.expiredFirst).toBe(tally.created);
    // Bounded in time: a slow machine runs fewer; at least a tenth (and the warm-up) must run.
    expect(tally.created).toBeGreaterThanOrEqual(Math.min(TASKS, Math.max(WARMUP, TASKS / 10)));
    expect(end.rss).toBeLessThanOrEqual(start.rss * 1.2);
    expect(end.heapUsed).toBeLessThanOrEqual(start.heapUsed * 1.2);
  }, 300_000);
});
