// Issue #21, the edge's part: one owner's floods of 2025-11-25 sessions, listen streams,
// blocking tasks/result waits and requests are refused with a clear, retryable error
// (in band as -32603 with data.reason and data.retryAfterMs, or 429 with Retry-After), are
// counted in /metrics, and leave the other owner served. Over real HTTP, in both eras, on
// the memory store and on PostgreSQL. Also the require-owner default and the operational
// endpoints' checks.
import type { TaskStore } from "@mcp-tasks/core";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDemoApp } from "../src/app.js";
import { StaticTokenResolver } from "../src/auth/static-tokens.js";
import { listen, type RunningServer } from "../src/http-server.js";
import { openStore } from "../src/store.js";
import { connectLegacy } from "./helpers/legacy-client.js";
import { DATABASE_URL, dropSchema, schemaName } from "./helpers/process.js";
import { ALICE, ALICE_OWNER, BOB, BOB_OWNER, startDemo } from "./helpers/server.js";
import { legacyInitialize, modernRequest, readResponse, rpc } from "./helpers/wire.js";

const LIMITS = {
  maxSessionsPerOwner: 5,
  maxListenStreamsPerOwner: 3,
  maxSubscribedTasksPerOwner: 8,
  maxResultWaitsPerOwner: 2,
};
/** The bound for the other owner's poll under a flood: generous, not a timing test. */
const ANSWERS_WITHIN_MS = 1_000;

type Demo = RunningServer & { app: Awaited<ReturnType<typeof startDemo>>["app"] };

const legacyHeaders = (token: string | undefined, sessionId?: string) => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-11-25",
  ...(token !== undefined && { authorization: `Bearer ${token}` }),
  ...(sessionId !== undefined && { "mcp-session-id": sessionId }),
});

function initialize(url: string, token: string | undefined, name = "flood"): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: legacyHeaders(token),
    body: JSON.stringify(legacyInitialize(name)),
  });
}

/** A 2025-11-25 request in a session; the response as it comes (an SSE stream may stay open). */
function legacyCall(
  url: string,
  token: string,
  sessionId: string,
  id: number,
  method: string,
  params: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: legacyHeaders(token, sessionId),
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
    ...(signal !== undefined && { signal }),
  });
}

async function openSession(url: string, token: string): Promise<string> {
  const response = await initialize(url, token);
  const sessionId = response.headers.get("mcp-session-id");
  await response.body?.cancel();
  if (sessionId === null) throw new Error(`no session (HTTP ${response.status})`);
  await fetch(url, {
    method: "POST",
    headers: legacyHeaders(token, sessionId),
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  }).then((r) => r.body?.cancel());
  return sessionId;
}

function expectLimit(
  body: { id?: unknown; error?: { code: number; message: string; data?: unknown } } | undefined,
  reason: string,
  id: unknown,
): void {
  expect(body?.id).toBe(id);
  expect(body?.error?.code).toBe(-32603);
  expect(body?.error?.message).toMatch(/retry after \d+ ms/);
  expect(body?.error?.data).toMatchObject({ reason, retryAfterMs: expect.any(Number) });
  expect(
    (body?.error?.data as { retryAfterMs?: number } | undefined)?.retryAfterMs,
  ).toBeGreaterThan(0);
}

async function refusals(demo: Demo, reason: string): Promise<number> {
  const text = await demo.app.metricsText();
  const line = new RegExp(`^mcp_limit_refusals_total\\{reason="${reason}"\\} (\\d+)$`, "m");
  return Number(line.exec(text)?.[1] ?? 0);
}

async function startTask(url: string, token: string, seconds: number): Promise<string> {
  const created = await rpc(
    url,
    "tools/call",
    { name: "slow_compute", arguments: { seconds, label: "flood" } },
    { token },
  );
  const taskId = created.body?.result?.taskId;
  if (typeof taskId !== "string") throw new Error(`no task: ${JSON.stringify(created.body)}`);
  return taskId;
}

/** Bob's poll of his own task: answered, and how long it took. */
async function bobPolls(url: string, taskId: string): Promise<number> {
  const began = performance.now();
  const { body } = await rpc(url, "tasks/get", { taskId }, { token: BOB });
  expect(body?.result?.taskId).toBe(taskId);
  return performance.now() - began;
}

const STORES: {
  name: string;
  open: () => Promise<{ store: TaskStore; drop: () => Promise<void> }>;
}[] = [
  {
    name: "memory",
    open: async () => ({
      store: new MemoryTaskStore({ sweepIntervalMs: 0 }),
      drop: async () => {},
    }),
  },
  {
    name: "postgres",
    open: async () => {
      const schema = schemaName("limits");
      const opened = await openStore({ kind: "postgres", databaseUrl: DATABASE_URL, schema });
      return { store: opened.store, drop: () => dropSchema(schema) };
    },
  },
];

describe.each(STORES)("per-owner limits at the edge ($name)", ({ open }) => {
  let demo: Demo;
  let drop: () => Promise<void>;
  const cleanup = new AbortController();

  beforeAll(async () => {
    const opened = await open();
    drop = opened.drop;
    demo = await startDemo({
      store: opened.store,
      legacy: true,
      requireAuth: true,
      limits: LIMITS,
      ...(opened.store instanceof MemoryTaskStore ? {} : { lease: { holder: "limits-node" } }),
    });
  });

  afterAll(async () => {
    cleanup.abort();
    await demo?.stop();
    await drop?.();
  });

  it("2025-11-25 session flood: the owner's sessions stop at the limit, the other owner's initialize succeeds", async () => {
    // 20 at once: the limit holds under concurrency.
    const flood = await Promise.all(Array.from({ length: 20 }, () => initialize(demo.url, ALICE)));
    const opened = flood.filter((r) => r.headers.get("mcp-session-id") !== null);
    expect(opened).toHaveLength(LIMITS.maxSessionsPerOwner);
    const refused = flood.filter((r) => r.headers.get("mcp-session-id") === null);
    for (const response of refused) {
      // initialize carries an id: answered in band, with Retry-After too.
      expect(response.status).toBe(200);
      expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
      expectLimit((await readResponse(response, 1)).body, "too_many_sessions", 1);
    }
    await Promise.all(opened.map((r) => r.body?.cancel()));
    expect(await refusals(demo, "too_many_sessions")).toBeGreaterThanOrEqual(15);

    // Bob, with the real SDK client: initialize succeeds.
    const bob = await connectLegacy(demo.url, BOB, "bob-after-flood");
    expect(bob.client.getServerVersion()?.name).toBe("mcp-tasks-demo");
    await bob.close();

    // Alice ends one session (DELETE): its slot is hers again.
    const ended = opened[0]?.headers.get("mcp-session-id") as string;
    const deleted = await fetch(demo.url, {
      method: "DELETE",
      headers: legacyHeaders(ALICE, ended),
    });
    expect(deleted.status).toBe(200);
    const again = await initialize(demo.url, ALICE);
    expect(again.headers.get("mcp-session-id")).not.toBeNull();
    await again.body?.cancel();
    for (const r of [...opened.slice(1), again]) {
      await fetch(demo.url, {
        method: "DELETE",
        headers: legacyHeaders(ALICE, r.headers.get("mcp-session-id") as string),
      }).then((d) => d.body?.cancel());
    }
  });

  it("2026-07-28 listen flood: streams and subscribed ids stop at their limits, the other owner's tasks/get answers within 1 s", async () => {
    const tasks = await Promise.all([1, 2, 3, 4].map(() => startTask(demo.url, ALICE, 30)));
    const bobTask = await startTask(demo.url, BOB, 0);
    let id = 1000;
    const listen = (taskIds: string[]) => {
      const { headers, body } = modernRequest(
        ++id,
        "subscriptions/listen",
        { notifications: { taskIds } },
        { token: ALICE },
      );
      return fetch(demo.url, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
        signal: cleanup.signal,
      }).then((response) => ({ response, id }));
    };
    const streams = [];
    const [t0, t1, t2, t3] = tasks as [string, string, string, string];
    // Three streams on 4 + 3 + 1 ids: both limits reached.
    for (const ids of [tasks, [t0, t1, t2], [t3]]) {
      const { response } = await listen(ids);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/text\/event-stream/);
      streams.push(response);
    }
    // A fourth stream: over the stream limit.
    const fourth = await listen([t0]);
    expect(fourth.response.status).toBe(200);
    expectLimit(
      (await readResponse(fourth.response, fourth.id)).body,
      "too_many_streams",
      fourth.id,
    );
    // Bob is served meanwhile, promptly.
    expect(await bobPolls(demo.url, bobTask)).toBeLessThan(ANSWERS_WITHIN_MS);
    // Close the one-id stream: a stream slot is free, but not two more subscribed ids.
    await streams.pop()?.body?.cancel();
    let reason: string | undefined;
    for (let i = 0; i < 50 && reason !== "too_many_subscriptions"; i++) {
      const over = await listen([t0, t1]);
      const { body } = await readResponse(over.response, over.id);
      reason = (body?.error?.data as { reason?: string } | undefined)?.reason;
      if (reason === "too_many_subscriptions") expectLimit(body, reason, over.id);
      else await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(reason).toBe("too_many_subscriptions");
    expect(await refusals(demo, "too_many_streams")).toBeGreaterThanOrEqual(1);
    expect(await refusals(demo, "too_many_subscriptions")).toBeGreaterThanOrEqual(1);
    expect(await bobPolls(demo.url, bobTask)).toBeLessThan(ANSWERS_WITHIN_MS);
    for (const stream of streams) await stream.body?.cancel();
    for (const taskId of tasks) await rpc(demo.url, "tasks/cancel", { taskId }, { token: ALICE });
  });

  it("2025-11-25 tasks/result waits: the owner's waits stop at the limit, the other owner's wait is served", async () => {
    const alice = await openSession(demo.url, ALICE);
    const created: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await legacyCall(demo.url, ALICE, alice, 10 + i, "tools/call", {
        name: "slow_compute",
        arguments: { seconds: 30, label: "wait" },
        task: { ttl: 60_000 },
      });
      const { body } = await readResponse(response, 10 + i);
      const taskId = (body?.result?.task as { taskId?: string } | undefined)?.taskId;
      expect(taskId).toBeTruthy();
      created.push(taskId as string);
    }
    const waits = await Promise.all(
      created
        .slice(0, 2)
        .map((taskId, i) =>
          legacyCall(demo.url, ALICE, alice, 20 + i, "tasks/result", { taskId }, cleanup.signal),
        ),
    );
    for (const wait of waits) expect(wait.status).toBe(200);
    const third = await legacyCall(demo.url, ALICE, alice, 30, "tasks/result", {
      taskId: created[2],
    });
    expect(third.status).toBe(200);
    expectLimit((await readResponse(third, 30)).body, "too_many_waits", 30);
    expect(await refusals(demo, "too_many_waits")).toBeGreaterThanOrEqual(1);

    // Bob waits for his own quick task's result, and gets it.
    const bob = await openSession(demo.url, BOB);
    const bobCreated = await readResponse(
      await legacyCall(demo.url, BOB, bob, 40, "tools/call", {
        name: "slow_compute",
        arguments: { seconds: 0, label: "bob" },
        task: { ttl: 60_000 },
      }),
      40,
    );
    const bobTask = (bobCreated.body?.result?.task as { taskId?: string } | undefined)?.taskId;
    expect(bobTask).toBeTypeOf("string");
    const result = await readResponse(
      await legacyCall(demo.url, BOB, bob, 41, "tasks/result", { taskId: bobTask }),
      41,
    );
    expect(result.body?.result?.content).toBeTruthy();

    // Alice's waits end (her tasks cancelled): her slots come back.
    for (const taskId of created) {
      await legacyCall(demo.url, ALICE, alice, 50, "tasks/cancel", { taskId }).then((r) =>
        r.text(),
      );
    }
    await Promise.all(waits.map((w) => w.text().catch(() => "")));
    const later = await legacyCall(demo.url, ALICE, alice, 60, "tasks/result", {
      taskId: created[2],
    });
    // Served (the cancelled task's own answer), not refused.
    const answer = (await readResponse(later, 60)).body;
    expect(answer?.id).toBe(60);
    expect((answer?.error?.data as { reason?: string } | undefined)?.reason).toBeUndefined();
  });
});

describe("an optional per-owner request rate", () => {
  let demo: Demo;

  beforeAll(async () => {
    demo = await startDemo({
      legacy: true,
      requireAuth: true,
      limits: { requestsPerSecond: 2, requestBurst: 5 },
    });
  });

  afterAll(async () => {
    await demo?.stop();
  });

  it("refuses the owner past their bucket, in band or 429 with Retry-After; the other owner is served", async () => {
    const taskId = await startTask(demo.url, BOB, 0);
    const answers = [];
    for (let i = 0; i < 12; i++) {
      answers.push(await rpc(demo.url, "tasks/get", { taskId: "none" }, { token: ALICE }));
    }
    const limited = answers.filter(
      (a) => (a.body?.error?.data as { reason?: string })?.reason === "rate_limited",
    );
    expect(limited.length).toBeGreaterThanOrEqual(5);
    expect(limited[0]?.headers.get("retry-after")).toMatch(/^\d+$/);
    expectLimit(limited[0]?.body, "rate_limited", limited[0]?.body?.id);
    // Without a JSON-RPC id to answer (a GET): 429 with Retry-After.
    const get = await fetch(demo.url, { headers: { authorization: `Bearer ${ALICE}` } });
    expect(get.status).toBe(429);
    expect(Number(get.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await get.json()) as { error: { data: unknown } }).error.data).toMatchObject({
      reason: "rate_limited",
    });
    expect(await bobPolls(demo.url, taskId)).toBeLessThan(ANSWERS_WITHIN_MS);
    expect(await refusals(demo, "rate_limited")).toBeGreaterThanOrEqual(6);
  });
});

describe("identity defaults and the operational endpoints", () => {
  const METRICS_TOKEN = "metrics-token-0123456789";
  let demo: Demo;

  beforeAll(async () => {
    // requireAuth left out: the demo's default posture.
    const app = createDemoApp({
      store: new MemoryTaskStore({ sweepIntervalMs: 0 }),
      resolver: new StaticTokenResolver(
        new Map([
          [ALICE, ALICE_OWNER],
          [BOB, BOB_OWNER],
        ]),
      ),
      legacy: true,
      onError: () => {},
    });
    const running = await listen(app, { host: "127.0.0.1", port: 0, metricsToken: METRICS_TOKEN });
    demo = Object.assign(running, { app });
  });

  afterAll(async () => {
    await demo?.stop();
  });

  it("refuses anonymous callers in both eras by default (tokens configured)", async () => {
    const modern = await rpc(demo.url, "tools/call", {
      name: "slow_compute",
      arguments: { seconds: 0 },
    });
    expect(modern.status).toBe(401);
    expect((await initialize(demo.url, undefined)).status).toBe(401);
    expect(demo.app.service.requireOwner).toBe(true);
  });

  it("/metrics and /health: the Host and Origin checks of /mcp, and the metrics token", async () => {
    const base = new URL(demo.url).origin;
    const bearer = { authorization: `Bearer ${METRICS_TOKEN}` };
    const { request } = await import("node:http");
    // fetch cannot set Host: send the forged one with node:http.
    const withHost = (path: string, host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(`${base}${path}`, { headers: { host, ...bearer } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on("error", reject);
        req.end();
      });
    expect(await withHost("/metrics", "evil.example")).toBe(403);
    expect(await withHost("/health", "evil.example")).toBe(403);
    expect(await withHost("/metrics", new URL(base).host)).toBe(200);
    const evilOrigin = await fetch(`${base}/health`, {
      headers: { origin: "http://evil.example" },
    });
    expect(evilOrigin.status).toBe(403);

    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    expect(
      (await fetch(`${base}/metrics`, { headers: { authorization: "Bearer wrong" } })).status,
    ).toBe(401);
    const metrics = await fetch(`${base}/metrics`, { headers: bearer });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain("mcp_limit_refusals_total");

    const open = (await (await fetch(`${base}/health`)).json()) as Record<string, unknown>;
    expect(open).toMatchObject({ status: "ok" });
    expect(open).not.toHaveProperty("holder");
    expect(JSON.stringify(open)).not.toContain(String(process.pid));
    const full = (await (await fetch(`${base}/health`, { headers: bearer })).json()) as Record<
      string,
      unknown
    >;
    expect(full).toHaveProperty("holder");
  });

  it("bounds client-name labels per owner: one owner's junk names cannot push out another's", async () => {
    for (let i = 0; i < 40; i++) {
      await rpc(demo.url, "tools/list", {}, { token: ALICE, clientName: `junk-${i}` });
    }
    await rpc(demo.url, "tools/list", {}, { token: BOB, clientName: "bobs-client" });
    expect(demo.app.metrics.requests.get("2026-07-28", "bobs-client")).toBe(1);
    // Alice's first 20 names are labels, the rest count as `other`.
    expect(demo.app.metrics.requests.get("2026-07-28", "junk-19")).toBe(1);
    expect(demo.app.metrics.requests.get("2026-07-28", "junk-20")).toBe(0);
    expect(demo.app.metrics.requests.get("2026-07-28", "other")).toBe(20);
  });
});
