import { isTaskError, type JanitorSweep, owner, startJanitor } from "@mcp-tasks/core";
import { type OwnerScope, ownerScope } from "@mcp-tasks/core/store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BatchedNotifier } from "../src/feed.js";
import { createPostgresTaskStore, type DrizzleTaskStore } from "../src/index.js";
import { DATABASE_URL, dropSchemas, freshSchemaName, migrateSchema, sleep } from "./helpers.js";

const SCOPE = ownerScope(owner({ principalId: "alice" }), { requireOwner: false }) as OwnerScope;
let n = 0;
const task = (overrides: Record<string, unknown> = {}) => ({
  taskId: `x-${process.pid}-${Date.now()}-${n++}`,
  era: "2026-07-28" as const,
  request: { toolName: "t", arguments: {} },
  ttlMs: 60_000,
  ttlAnchor: "creation" as const,
  pollIntervalMs: null,
  ...overrides,
});

describe("database clock, bad input, janitor (PostgreSQL, no injected clock)", () => {
  const schema = freshSchemaName("x");
  let store: DrizzleTaskStore;

  beforeAll(async () => {
    await migrateSchema(schema);
    store = await createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 4 });
  });
  afterAll(async () => {
    await store?.close();
    await dropSchemas([schema]);
  });

  it("timestamps and expiry come from the database clock", async () => {
    const [{ now }] = (await store.query(
      "SELECT (extract(epoch from now()) * 1000)::float8 AS now",
    )) as [{ now: number }];
    const t = await store.create(task({ ttlMs: 5000, ttlAnchor: "terminal" }), SCOPE);
    expect(Math.abs(t.createdAt - now)).toBeLessThan(5000);
    expect(Number.isInteger(t.createdAt)).toBe(true);
    const done = await store.complete(t.taskId, SCOPE, {});
    expect(done.expiresAt).toBe(done.lastUpdatedAt + 5000);
    expect(await store.get(t.taskId, SCOPE)).toEqual(done);
  });

  it("records returned by create and the terminal writes equal a later read", async () => {
    // create and the terminal transitions return only the database's part of the row and
    // fill in the rest from their input: the records must still be exactly what a read gives.
    const full = ownerScope(owner({ principalId: "bob", tenantId: "t1", audience: null }), {
      requireOwner: true,
    }) as OwnerScope;
    const request = { toolName: "t", arguments: { z: 1, a: [1, "two", null], nested: { x: 0.5 } } };
    const made = [
      await store.create(task({ request, statusMessage: "queued", pollIntervalMs: 250 }), full),
      await store.create(task({ ttlMs: null, lease: { holder: "n1", durationMs: 60_000 } }), full),
      await store.create(task({ ttlAnchor: "terminal" }), full),
    ];
    request.arguments.z = 2; // the caller's object is not the record's
    expect(made[0]!.request.arguments).toEqual({ z: 1, a: [1, "two", null], nested: { x: 0.5 } });
    for (const t of made) expect(await store.get(t.taskId, full)).toEqual(t);

    const result = { content: [{ type: "text", text: "ok" }], structuredContent: { n: 1 } };
    const done = await store.complete(made[0]!.taskId, full, result, "done");
    result.structuredContent.n = 2;
    expect(done.outcome).toEqual({
      kind: "result",
      result: { content: [{ type: "text", text: "ok" }], structuredContent: { n: 1 } },
    });
    const failed = await store.fail(made[1]!.taskId, full, { code: -32000, message: "boom" });
    await store.requireInput(made[2]!.taskId, full, { k: { method: "elicitation/create" } });
    const cancelled = await store.markCancelled(made[2]!.taskId, full);
    expect(cancelled.inputRequests).toEqual({});
    expect(failed.statusMessage).toBe("boom");
    for (const t of [done, failed, cancelled]) {
      expect(await store.get(t.taskId, full)).toEqual(t);
    }
  });

  it("refuses what the database cannot store with invalid_task, never a raw error", async () => {
    const cases: (() => Promise<unknown>)[] = [
      () =>
        store.create(task({ request: { toolName: "t", arguments: { s: "nul\u0000" } } }), SCOPE),
      () => store.create(task({ request: { toolName: "t", arguments: { big: 1n } } }), SCOPE),
      () => store.create(task({ era: "1999-01-01" }), SCOPE),
      () => store.create(task({ ttlMs: Number.MAX_SAFE_INTEGER }), SCOPE),
      () => store.create(task({ statusMessage: "nul\u0000" }), SCOPE),
      () => store.create(task({ lease: { holder: "", durationMs: 10 } }), SCOPE),
    ];
    for (const call of cases) {
      await expect(call()).rejects.toSatisfy((e: unknown) => isTaskError(e, "invalid_task"));
    }
    const t = await store.create(task(), SCOPE);
    await expect(store.complete(t.taskId, SCOPE, { text: "nul\u0000" })).rejects.toSatisfy(
      (e: unknown) => isTaskError(e, "invalid_task"),
    );
    expect((await store.get(t.taskId, SCOPE)).status).toBe("working");
  });

  it("the core janitor deletes expired tasks in bounded batches and reports counts", async () => {
    for (let i = 0; i < 7; i++) {
      const t = await store.create(task({ ttlMs: 1 }), SCOPE);
      await store.complete(t.taskId, SCOPE, {});
    }
    await sleep(10);
    const sweeps: JanitorSweep[] = [];
    const stop = startJanitor(store, { intervalMs: 20, batch: 3, onSweep: (s) => sweeps.push(s) });
    for (let i = 0; i < 100 && sweeps.reduce((a, s) => a + s.removed, 0) < 7; i++) await sleep(20);
    await stop();
    expect(sweeps.reduce((a, s) => a + s.removed, 0)).toBe(7);
    expect(Math.max(...sweeps.map((s) => s.removed))).toBeLessThanOrEqual(3);
    expect(sweeps.every((s) => s.error === undefined)).toBe(true);
  });

  it("a closed store answers store_unavailable", async () => {
    const other = await createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 1 });
    await other.close();
    await expect(other.get("x", SCOPE)).rejects.toSatisfy((e: unknown) =>
      isTaskError(e, "store_unavailable"),
    );
  });
});

describe("paced after-commit notifications", () => {
  it("a stream of changes goes out in fewer batches, all of them, in order; close flushes", async () => {
    const sent: string[][] = [];
    const notifier = new BatchedNotifier(
      async (batch) => {
        sent.push(batch);
      },
      { minIntervalMs: 20 },
    );
    const all = Array.from({ length: 200 }, (_, i) => `p${i}`);
    for (const p of all) {
      notifier.publish(p);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await notifier.close();
    expect(sent.flat()).toEqual(all);
    expect(sent.length).toBeLessThan(all.length);
    notifier.publish("after close");
    expect(sent.flat()).toEqual(all);
  });

  it("with a long interval, another node still sees every change, in order", async () => {
    const schema = freshSchemaName("p");
    await migrateSchema(schema);
    const a = await createPostgresTaskStore({ url: DATABASE_URL, schema, notifyIntervalMs: 200 });
    const b = await createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 2 });
    try {
      const t = await a.create(task(), SCOPE);
      const seen: number[] = [];
      const stop = b.watch((c) => {
        if (c.kind === "status_message") seen.push(c.version);
      }, t.taskId);
      for (let i = 0; i < 20; i++) await a.setStatusMessage(t.taskId, SCOPE, `step ${i}`);
      for (let i = 0; i < 100 && seen.length < 20; i++) await sleep(50);
      stop();
      expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
    } finally {
      await a.close();
      await b.close();
      await dropSchemas([schema]);
    }
  });
});
