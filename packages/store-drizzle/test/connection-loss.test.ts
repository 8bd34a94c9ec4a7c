import { isTaskError, owner } from "@mcp-tasks/core";
import { type OwnerScope, ownerScope } from "@mcp-tasks/core/store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresTaskStore, type DrizzleTaskStore } from "../src/index.js";
import {
  DATABASE_URL,
  dropSchemas,
  freshSchemaName,
  migrateSchema,
  newTask,
  sleep,
} from "./helpers.js";
import { Relay } from "./relay.js";

const SCOPE = ownerScope(owner({ principalId: "alice" }), { requireOwner: false }) as OwnerScope;

async function expectUnavailable(promise: Promise<unknown>): Promise<number> {
  const started = Date.now();
  try {
    await promise;
  } catch (error) {
    expect(isTaskError(error, "store_unavailable"), String(error)).toBe(true);
    expect((error as Error).message).toMatch(/unavailable/);
    return Date.now() - started;
  }
  throw new Error("expected store_unavailable, but the call succeeded");
}

/**
 * How long the store may take to serve again once the database is back: its pool's
 * reconnect plus a loaded two-core machine's headroom (it takes well under a second idle).
 * The point of these tests is that it recovers by itself within a bound, not how fast.
 */
const RECOVERY_BOUND_MS = 10_000;

/**
 * Calls `read` until it succeeds, each failure meanwhile being `store_unavailable`, for at
 * most {@link RECOVERY_BOUND_MS}; resolves with what it read.
 */
async function onceRecovered<T>(read: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + RECOVERY_BOUND_MS;
  for (;;) {
    try {
      return await read();
    } catch (error) {
      expect(isTaskError(error, "store_unavailable"), String(error)).toBe(true);
      if (Date.now() > deadline) throw error;
      await sleep(50); // the pool reconnects in the background; look again shortly
    }
  }
}

describe("connection loss", () => {
  const schema = freshSchemaName("c");
  const relay = new Relay();
  let store: DrizzleTaskStore;

  beforeAll(async () => {
    await migrateSchema(schema);
    await relay.start();
    store = await createPostgresTaskStore({
      url: relay.url(),
      schema,
      poolSize: 4,
      operationTimeoutMs: 1500,
      applicationName: schema,
      connectTimeoutSeconds: 2,
    });
  });

  afterAll(async () => {
    await store?.close();
    await relay.stop();
    await dropSchemas([schema]);
  });

  const task = (id: string) => newTask(`${schema}-${id}`);

  it("fails fast with store_unavailable while the database is gone, and recovers without losing a task", async () => {
    const committed = await store.create(task("before"), SCOPE);
    await relay.stop();
    const elapsed = await expectUnavailable(store.get(committed.taskId, SCOPE));
    expect(elapsed).toBeLessThan(10_000);
    await expectUnavailable(store.create(task("during"), SCOPE));
    await expectUnavailable(store.list(SCOPE, { limit: 10 }));

    await relay.start(); // the same port: the database is back
    expect(await onceRecovered(() => store.get(committed.taskId, SCOPE))).toEqual(committed);
    const after = await store.create(task("after"), SCOPE);
    expect((await store.get(after.taskId, SCOPE)).status).toBe("working");
  });

  it("a database that accepts connections but never answers times out, never hangs", async () => {
    await relay.stop();
    relay.blackHole = true;
    await relay.start();
    try {
      const elapsed = await expectUnavailable(store.get(`${schema}-before`, SCOPE));
      expect(elapsed).toBeLessThan(10_000);
    } finally {
      await relay.stop();
      relay.blackHole = false;
      await relay.start();
    }
    const read = await onceRecovered(() => store.get(`${schema}-before`, SCOPE));
    expect(read.taskId).toBe(`${schema}-before`);
  });

  it("a backend killed by the server (pg_terminate_backend) costs at most the calls in flight", async () => {
    const admin = await createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 1 });
    try {
      await store.get(`${schema}-before`, SCOPE);
      // Every connection of the store: its pools (the read pool's served that get, so one is
      // open whatever the earlier tests left) and its listener. Its main pool alone may have
      // none open at this point, its connections closed by the black hole above.
      const killed = await admin.query(
        `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
         WHERE application_name = $1 OR starts_with(application_name, $1 || '-')`,
        [schema],
      );
      expect(killed[0]!.n).toBeGreaterThan(0);
      const read = await onceRecovered(() => store.get(`${schema}-before`, SCOPE));
      expect(read.taskId).toBe(`${schema}-before`);
    } finally {
      await admin.close();
    }
  });
});

describe("connection refused", () => {
  const schema = freshSchemaName("r");
  const relay = new Relay();
  let store: DrizzleTaskStore;

  beforeAll(async () => {
    await migrateSchema(schema);
    await relay.start();
    // The default operation timeout (10 s): a refused connection must not wait for it.
    store = await createPostgresTaskStore({ url: relay.url(), schema, applicationName: schema });
  });

  afterAll(async () => {
    await store?.close();
    await relay.stop();
    await dropSchemas([schema]);
  });

  const task = (id: string) => newTask(`${schema}-${id}`);

  it("answers store_unavailable promptly on every call while connects are refused, then recovers by itself", async () => {
    const committed = await store.create(task("before"), SCOPE);
    await relay.stop(); // open connections reset, new ones refused
    // Enough calls one after another for the driver's reconnect backoff to grow past the
    // operation timeout had it not been bounded; each must still fail in well under it.
    const slowest = { ms: 0 };
    for (let i = 0; i < 12; i++) {
      const ms = await expectUnavailable(
        i % 2 === 0 ? store.get(committed.taskId, SCOPE) : store.create(task(`during-${i}`), SCOPE),
      );
      slowest.ms = Math.max(slowest.ms, ms);
    }
    // A burst larger than the pool: calls queued behind refused connects fail fast too.
    const started = Date.now();
    const burst = await Promise.allSettled(
      Array.from({ length: 64 }, () => store.get(committed.taskId, SCOPE)),
    );
    const burstMs = Date.now() - started;
    for (const r of burst) {
      expect(r.status).toBe("rejected");
      const error = (r as PromiseRejectedResult).reason;
      expect(isTaskError(error, "store_unavailable"), String(error)).toBe(true);
    }
    // Generous bounds (today's wait was the 10 s operation timeout), not a benchmark.
    expect(slowest.ms).toBeLessThan(3_000);
    expect(burstMs).toBeLessThan(3_000);

    await relay.start(); // the same port: the database is back
    expect(await onceRecovered(() => store.get(committed.taskId, SCOPE))).toEqual(committed);
    // Nothing written while the database was away shows up afterwards.
    const listed = await store.list(SCOPE, { limit: 100 });
    expect(listed.tasks.map((t) => t.taskId)).toEqual([committed.taskId]);
    const after = await store.create(task("after"), SCOPE);
    expect((await store.get(after.taskId, SCOPE)).status).toBe("working");
  }, 60_000);
});
