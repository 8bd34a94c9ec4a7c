// The quota usage counters on PostgreSQL with two stores (two pools, as two nodes) writing
// the same table at once: creates grouped into batches, answers, endings, deletions, expiry
// sweeps and orphan recoveries on both, racing. Afterwards the counters agree with a full
// recount of the table, and the quotas still hold against them.
import { isTaskError, ManualClock, owner } from "@mcp-tasks/core";
import { type OwnerScope, ownerScope } from "@mcp-tasks/core/store";
import { afterAll, describe, expect, it } from "vitest";
import { createPostgresTaskStore, type DrizzleTaskStore } from "../src/index.js";
import { DATABASE_URL, dropSchemas, freshSchemaName, migrateSchema } from "./helpers.js";

const SCOPES = ["alice", "bob", "carol"].map(
  (principalId) => ownerScope(owner({ principalId }), { requireOwner: false }) as OwnerScope,
);
const EXPECTED = new Set([
  "store_full",
  "invalid_transition",
  "not_found_or_unauthorized",
  "lease_lost",
]);

/** A seeded generator (mulberry32): a failing run repeats. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function tolerate(write: Promise<unknown>): Promise<void> {
  try {
    await write;
  } catch (error) {
    if (!(isTaskError(error) && EXPECTED.has(error.code))) throw error;
  }
}

describe("quota usage counters with two pools writing at once (PostgreSQL)", () => {
  const schemas: string[] = [];
  const stores: DrizzleTaskStore[] = [];
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await dropSchemas(schemas);
  });

  it("agree with a recount of the table after racing random writes on both", async () => {
    const schema = freshSchemaName("use");
    schemas.push(schema);
    await migrateSchema(schema);
    const clock = new ManualClock(Date.UTC(2026, 6, 28, 12));
    const open = () =>
      createPostgresTaskStore({
        url: DATABASE_URL,
        schema,
        clock,
        poolSize: 6,
        maxTasks: 400,
        maxTasksPerOwner: 150,
        maxBytesPerOwner: 60_000,
      });
    const a = await open();
    const b = await open();
    stores.push(a, b);
    const random = seeded(42);
    const made: { id: string; scope: OwnerScope }[] = [];
    let n = 0;
    const argsOf = (bytes: number) => ({ b: "x".repeat(bytes) });

    const write = (): Promise<unknown> => {
      const s = random() < 0.5 ? a : b;
      const scope = SCOPES[Math.floor(random() * SCOPES.length)]!;
      const t = made[Math.floor(random() * made.length)];
      const bytes = Math.floor(random() * 600);
      const op = Math.floor(random() * 10);
      if (op <= 2 || t === undefined) {
        const id = `u-${n++}`;
        return s
          .create(
            {
              taskId: id,
              era: "2026-07-28",
              request: { toolName: "t", arguments: argsOf(bytes) },
              ttlMs: 50 + Math.floor(random() * 300),
              ttlAnchor: "creation",
              pollIntervalMs: null,
            },
            scope,
          )
          .then(() => {
            made.push({ id, scope });
          });
      }
      switch (op) {
        case 3:
          return s.complete(t.id, t.scope, argsOf(bytes));
        case 4:
          return s.fail(t.id, t.scope, { code: -32000, message: "m".repeat(bytes) });
        case 5: {
          const key = `q${n++}`;
          return s
            .requireInput(t.id, t.scope, { [key]: { method: "elicitation/create" } })
            .then(() => s.submitInput(t.id, t.scope, { [key]: argsOf(bytes) }));
        }
        case 6:
          return s.delete(t.id, t.scope);
        case 7:
          return s.markCancelled(t.id, t.scope);
        case 8:
          clock.advance(Math.floor(random() * 60));
          return s.cleanupExpired({ limit: 20 });
        default:
          return s.claim(`w-${op}`, { limit: 3, leaseMs: 10 }).then(() => {
            clock.advance(15);
            return s.recoverOrphans();
          });
      }
    };

    for (let round = 0; round < 6; round++) {
      await Promise.all(Array.from({ length: 48 }, () => tolerate(write())));
      const audit = await a.auditUsage();
      expect(audit.counters).toEqual(audit.recount);
      expect(await b.auditUsage()).toEqual(audit);
    }
    expect(made.length).toBeGreaterThan(50);
    // Everything expires; one sweep of each store removes it all, counters included.
    clock.advance(24 * 60 * 60 * 1000);
    await Promise.all(made.map((t) => tolerate(a.markCancelled(t.id, t.scope))));
    clock.advance(24 * 60 * 60 * 1000);
    await Promise.all([a.cleanupExpired(), b.cleanupExpired()]);
    const end = await a.auditUsage();
    expect(end).toEqual({ counters: { tasks: 0, owners: {} }, recount: { tasks: 0, owners: {} } });
    // Owners that hold nothing keep no counter rows (the total's stripes stay).
    const rows = await a.query(
      `SELECT count(*)::int AS n FROM "${schema}".mcp_task_usage WHERE owner_key <> '*'`,
    );
    expect(rows[0]!.n).toBe(0);
  });

  it("cleanup removes an owner's counter rows only together, and only when they sum to zero", async () => {
    const schema = freshSchemaName("use");
    schemas.push(schema);
    await migrateSchema(schema);
    const clock = new ManualClock(Date.UTC(2026, 6, 28, 12));
    const s = await createPostgresTaskStore({ url: DATABASE_URL, schema, clock, poolSize: 2 });
    stores.push(s);
    const U = `"${schema}".mcp_task_usage`;
    // An owner key no task has: its stripes sum to zero, one by one they do not (each
    // statement writes a stripe of its own, so this is what a holder of nothing may look like).
    await s.query(`INSERT INTO ${U} VALUES ('zed', 3, 1, 10), ('zed', 4, -1, -10)`);
    const expiring = async (id: string) => {
      await s.create(
        {
          taskId: id,
          era: "2026-07-28",
          request: { toolName: "t", arguments: {} },
          ttlMs: 1_000,
          ttlAnchor: "creation",
          pollIntervalMs: null,
        },
        SCOPES[0]!,
      );
      await s.complete(id, SCOPES[0]!, { content: [] });
      clock.advance(2_000);
    };
    const zed = async () =>
      (await s.query(`SELECT stripe FROM ${U} WHERE owner_key = 'zed' ORDER BY stripe`)).map(
        (r) => r.stripe,
      );
    // A writer holds one of zed's rows: the one the cleanup can lock does not sum to zero
    // alone, so neither goes.
    const { default: postgres } = await import("postgres");
    const other = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
    try {
      await other.begin(async (tx) => {
        await tx.unsafe(`SELECT 1 FROM ${U} WHERE owner_key = 'zed' AND stripe = 3 FOR UPDATE`);
        await expiring("e1");
        expect(await s.cleanupExpired()).toBe(1);
        expect(await zed()).toEqual([3, 4]);
      });
    } finally {
      await other.end();
    }
    // Nobody holds them any more: both go, and the sums are what they were.
    await expiring("e2");
    expect(await s.cleanupExpired()).toBe(1);
    expect(await zed()).toEqual([]);
    const audit = await s.auditUsage();
    expect(audit.counters).toEqual(audit.recount);
  });

  it("grouped creates each get their own quota check and their own error", async () => {
    const schema = freshSchemaName("use");
    schemas.push(schema);
    await migrateSchema(schema);
    const s = await createPostgresTaskStore({
      url: DATABASE_URL,
      schema,
      poolSize: 2,
      maxTasksPerOwner: 4,
      maxBytesPerOwner: 1000,
    });
    stores.push(s);
    const [alice, bob] = SCOPES as [OwnerScope, OwnerScope];
    const task = (taskId: string, bytes = 10) => ({
      taskId,
      era: "2026-07-28" as const,
      request: { toolName: "t", arguments: { b: "x".repeat(bytes) } },
      ttlMs: null,
      ttlAnchor: "creation" as const,
      pollIntervalMs: null,
    });
    // Issued in one turn, so they leave as one statement: Alice's fifth and later are over
    // her count, the big one over her bytes (and it does not use up room for the next), the
    // second "dup" is taken, and Bob's are his own.
    const calls: [string, OwnerScope, number?][] = [
      ["a1", alice],
      ["big", alice, 2000],
      ["dup", alice],
      ["dup", alice],
      ["a3", alice],
      ["b1", bob],
      ["a4", alice],
      ["a5", alice],
      ["b2", bob],
    ];
    const settled = await Promise.allSettled(
      calls.map(([id, scope, bytes]) => s.create(task(id, bytes), scope)),
    );
    const outcome = settled.map((r) =>
      r.status === "fulfilled" ? "ok" : (r.reason as { code: string }).code,
    );
    expect(outcome).toEqual([
      "ok",
      "store_full",
      "ok",
      "already_exists",
      "ok",
      "ok",
      "ok",
      "store_full",
      "ok",
    ]);
    const audit = await s.auditUsage();
    expect(audit.counters).toEqual(audit.recount);
    expect(audit.counters.tasks).toBe(6);
  });
});
