import { isTaskError, type OwnerScope, owner, ownerScope } from "@mcp-tasks/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createPostgresTaskStore,
  type DrizzleTaskStore,
  type JanitorSweep,
  migrate,
  startJanitor,
} from "../src/index.js";
import { DATABASE_URL, dropSchemas, freshSchemaName, sleep } from "./helpers.js";

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
    await migrate(DATABASE_URL, { schema });
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

  it("the janitor deletes expired tasks in bounded batches and reports counts", async () => {
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
