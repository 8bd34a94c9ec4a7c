// `createTaskStore` on the connection an application already has: telling drivers apart
// (a Drizzle database by its `$client`), the same records whichever driver reads them,
// changes crossing drivers, node-postgres's LISTEN connection (a Pool's checked-out client,
// a single Client's own connection), `migrate`/`dropTaskSchema` through each driver, and
// connection problems as `store_unavailable`. The contract suites run per driver in
// contract-drivers.test.ts.
import { PGlite } from "@electric-sql/pglite";
import { isTaskError, owner, type TaskChange, type TaskRecord } from "@mcp-tasks/core";
import { type NewTask, type OwnerScope, ownerScope } from "@mcp-tasks/core/store";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { drizzle as drizzleNodePostgres } from "drizzle-orm/node-postgres";
import { drizzle as drizzlePGlite } from "drizzle-orm/pglite";
import { drizzle as drizzlePostgresJs } from "drizzle-orm/postgres-js";
import pg from "pg";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { resolveClient } from "../src/drivers.js";
import {
  createPostgresTaskStore,
  createTaskStore,
  type DrizzleTaskStore,
  dropTaskSchema,
  MAX_TTL_MS,
  MIGRATIONS_FOLDER,
  migrate,
} from "../src/index.js";
import { DATABASE_URL, dropSchemas, freshSchemaName, migrateSchema, sleep } from "./helpers.js";

const scopeOf = (parts: Parameters<typeof owner>[0]) =>
  ownerScope(owner(parts), { requireOwner: false }) as OwnerScope;
const ALICE = scopeOf({ principalId: "alice", tenantId: "acme", audience: "api" });
const BOB = scopeOf({ principalId: "bob" });
const ANON = scopeOf({});

const schemas: string[] = [];
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => {});
  await dropSchemas(schemas);
});

function pool(options: pg.PoolConfig = {}): pg.Pool {
  const p = new pg.Pool({ connectionString: DATABASE_URL, max: 4, ...options });
  closers.push(() => p.end());
  return p;
}

async function client(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: DATABASE_URL });
  await c.connect();
  closers.push(() => c.end());
  return c;
}

function sql(): postgres.Sql {
  const s = postgres(DATABASE_URL, { max: 4, onnotice: () => {} });
  closers.push(() => s.end({ timeout: 5 }));
  return s;
}

/** One in-memory PGlite for the file (starting one takes seconds). */
let sharedLite: PGlite | undefined;
async function pglite(): Promise<PGlite> {
  if (sharedLite === undefined) {
    const lite = new PGlite();
    sharedLite = lite;
    closers.push(() => lite.close());
  }
  await sharedLite.waitReady;
  return sharedLite;
}

async function freshSchema(): Promise<string> {
  const schema = freshSchemaName("dr");
  schemas.push(schema);
  await migrateSchema(schema);
  return schema;
}

let n = 0;
const newTask = (overrides: Partial<NewTask> = {}): NewTask => ({
  taskId: `dr-${process.pid}-${n++}`,
  era: "2026-07-28",
  request: { toolName: "build", arguments: {} },
  ttlMs: 60_000,
  ttlAnchor: "terminal",
  pollIntervalMs: null,
  ...overrides,
});

const fenced = (scope: OwnerScope, t: TaskRecord): OwnerScope => ({
  ...scope,
  fence: { holder: t.execution.holder!, fencingToken: t.execution.fencingToken },
});

/** Waits (bounded) until `check` holds. */
async function eventually(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 5_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe("telling drivers apart", () => {
  it("takes postgres.js, node-postgres Pool and Client, PGlite, and a Drizzle database over each", async () => {
    const s = sql();
    const p = pool();
    const c = new pg.Client({ connectionString: DATABASE_URL }); // never connected: only looked at
    const lite = await pglite();
    expect(resolveClient(s).driver).toBe("postgres");
    expect(resolveClient(p).driver).toBe("pg-pool");
    expect(resolveClient(c).driver).toBe("pg-client");
    expect(resolveClient(lite).driver).toBe("pglite");
    expect(resolveClient(drizzlePostgresJs({ client: s })).driver).toBe("postgres");
    expect(resolveClient(drizzleNodePostgres({ client: p })).driver).toBe("pg-pool");
    expect(resolveClient(drizzleNodePostgres({ client: c })).driver).toBe("pg-client");
    expect(resolveClient(drizzlePGlite({ client: lite })).driver).toBe("pglite");
    // A pool drizzle made itself from connection settings is the application's too.
    const own = drizzleNodePostgres({ connection: { connectionString: DATABASE_URL } });
    closers.push(() => own.$client.end());
    expect(resolveClient(own)).toEqual({ driver: "pg-pool", pool: own.$client });
  });

  it("refuses anything else with a TypeError naming what it takes", async () => {
    for (const bad of [{}, "postgres://x", null, { query: 1 }, drizzleNodePostgres.mock()]) {
      expect(() => resolveClient(bad)).toThrow(TypeError);
    }
    await expect(createTaskStore({ client: {} as never })).rejects.toThrow(
      /postgres\.js client, a node-postgres Pool or Client, a PGlite instance, or a Drizzle database/,
    );
    await expect(migrate({} as never)).rejects.toThrow(TypeError);
  });
});

describe("the same records through every driver", () => {
  it("reads (get, list) and writes give identical records, whatever the type parsers", async () => {
    const schema = await freshSchema();
    const js = await createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 2 });
    closers.push(() => js.close());
    // An application pool whose parsers turn everything into text (what people do to keep
    // int8, numeric or timestamps exact): the store's queries bring their own.
    const textPool = pool({ types: { getTypeParser: () => (value: string) => value } });
    const others: [string, DrizzleTaskStore][] = [];
    for (const [name, c] of [
      ["pg Pool (text parsers)", textPool],
      ["pg Client", await client()],
      ["Drizzle over pg", drizzleNodePostgres({ client: pool() })],
      ["Drizzle over postgres.js", drizzlePostgresJs({ client: sql() })],
    ] as const) {
      const store = await createTaskStore({ client: c, schema });
      closers.push(() => store.close());
      others.push([name, store]);
    }

    // Every column in use: all owner parts and none, bigints past int4, jsonb with unicode
    // and nesting, timestamps set by each kind of write, a lease, an input ledger.
    const full = await js.create(
      newTask({
        request: {
          toolName: "build",
          arguments: { deep: { list: [1, "ü", null, { "😀": true }] }, big: 2 ** 53 - 1 },
        },
        statusMessage: "Zürich → 東京",
        ttlMs: MAX_TTL_MS,
        ttlAnchor: "creation",
        pollIntervalMs: 3_000_000_000,
        execution: { maxAttempts: 5, backoffMs: 2_000, retryOnError: true, deadlineMs: 86_400_000 },
        lease: { holder: "worker-1", durationMs: 30_000 },
      }),
      ALICE,
    );
    const run = fenced(ALICE, full);
    await js.requireInput(full.taskId, run, {
      q1: { method: "elicitation/create", params: { message: "one?" } },
      q2: { method: "elicitation/create", params: { message: "two?" } },
    });
    await js.submitInput(full.taskId, ALICE, { q1: { action: "accept", content: { a: 1 } } });
    await js.requestCancel(full.taskId, ALICE);
    const done = await js.create(newTask(), BOB);
    const [claimed] = await js.claim("worker-2", { limit: 1, leaseMs: 10_000 });
    expect(claimed!.taskId).toBe(done.taskId);
    await js.complete(done.taskId, fenced(BOB, claimed!), {
      content: [{ type: "text", text: "ok" }],
    });
    const failed = await js.create(newTask({ ttlMs: null }), BOB);
    await js.fail(failed.taskId, BOB, { code: -32000, message: "no", data: { why: ["x"] } });
    const queued = await js.create(newTask({ ttlMs: null }), ANON);

    const reads = async (store: DrizzleTaskStore) => ({
      full: await store.get(full.taskId, ALICE),
      done: await store.get(done.taskId, BOB),
      failed: await store.get(failed.taskId, BOB),
      queued: await store.get(queued.taskId, ANON),
      bobPage1: await store.list(BOB, { limit: 1 }),
      anonWithUnowned: await store.list({ ...ALICE, includeUnowned: true }, { limit: 10 }),
    });
    const expected = await reads(js);
    expect(expected.full.inputRequests).toHaveProperty("q2");
    expect(expected.full.cancelRequestedAt).toBeTypeOf("number");
    expect(expected.done.expiresAt).toBeTypeOf("number");
    expect(expected.bobPage1.nextCursor).toBeDefined();
    for (const [name, store] of others) {
      expect({ name, ...(await reads(store)) }).toEqual({ name, ...expected });
    }

    // Writes through node-postgres return what postgres.js then reads.
    const [, viaPg] = others[0]!;
    const written = await viaPg.create(newTask({ statusMessage: "via pg" }), ALICE);
    expect(await js.get(written.taskId, ALICE)).toEqual(written);
    const [taken] = await viaPg.claim("worker-3", {
      limit: 1,
      toolNames: ["build"],
      leaseMs: 5_000,
    });
    const completed = await viaPg.complete(
      taken!.taskId,
      fenced(taken!.owner.principalId === "alice" ? ALICE : ANON, taken!),
      { n: 1 },
    );
    expect(
      await js.get(completed.taskId, taken!.owner.principalId === "alice" ? ALICE : ANON),
    ).toEqual(completed);
  });
});

describe("changes cross drivers", () => {
  it("a write through any driver wakes watchers on the others", async () => {
    const schema = await freshSchema();
    const stores: [string, DrizzleTaskStore][] = [
      ["postgres.js", await createTaskStore({ client: sql(), schema })],
      ["pg Pool", await createTaskStore({ client: pool(), schema })],
      ["pg Client", await createTaskStore({ client: await client(), schema })],
    ];
    for (const [, store] of stores) closers.push(() => store.close());
    const heard = new Map<string, TaskChange[]>(stores.map(([name]) => [name, []]));
    for (const [name, store] of stores) store.watch((change) => heard.get(name)!.push(change));
    for (const [writer, store] of stores) {
      const task = await store.create(newTask(), ALICE);
      await store.setStatusMessage(task.taskId, ALICE, `from ${writer}`);
      for (const [listener] of stores) {
        await eventually(
          () =>
            heard
              .get(listener)!
              .some((c) => c.taskId === task.taskId && c.kind === "status_message"),
          `${listener} to hear ${writer}`,
        );
      }
    }
  });
});

describe("node-postgres LISTEN", () => {
  it("a Pool lends one client while the store is open, takes it back on close, and listens again after losing it", async () => {
    const schema = await freshSchema();
    const app = `mcp-drivers-${process.pid}`;
    const p = pool({ application_name: app });
    const store = await createTaskStore({ client: p, schema });
    expect([p.totalCount, p.idleCount]).toEqual([1, 0]);
    const writer = await createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 1 });
    closers.push(() => writer.close());
    const heard: TaskChange[] = [];
    store.watch((c) => heard.push(c));
    const hears = async (what: string) => {
      const task = await writer.create(newTask(), ALICE);
      await eventually(() => heard.some((c) => c.taskId === task.taskId), what);
    };
    await hears("a change before the loss");

    // The database ends the LISTEN connection: the store drops it and listens on a new one.
    const admin = sql();
    const listeners = async () =>
      (
        await admin`SELECT pid FROM pg_stat_activity
          WHERE application_name = ${app} AND query LIKE 'LISTEN %'`
      ).map((row) => row.pid as number);
    const [lost] = await listeners();
    await admin`SELECT pg_terminate_backend(${lost!}::int)`;
    await eventually(async () => {
      const pids = await listeners();
      return pids.length === 1 && pids[0] !== lost;
    }, "the store to listen on a new connection");
    expect([p.totalCount, p.idleCount]).toEqual([1, 0]);
    await hears("a change after the loss");

    await store.close();
    expect(p.idleCount).toBe(p.totalCount);
    // The client went back to the pool without its LISTEN.
    const back = await p.connect();
    try {
      const { rows } = await back.query("SELECT count(*)::int AS n FROM pg_listening_channels()");
      expect(rows[0].n).toBe(0);
    } finally {
      back.release();
    }
    expect((await p.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
  });

  it("a single Client carries statements, notifications and LISTEN; close leaves it open and listening to nothing", async () => {
    const schema = await freshSchema();
    const c = await client();
    const store = await createTaskStore({ client: c, schema });
    const other = await createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 1 });
    closers.push(() => other.close());
    const onClient: TaskChange[] = [];
    const onOther: TaskChange[] = [];
    store.watch((change) => onClient.push(change));
    other.watch((change) => onOther.push(change));
    const mine = await store.create(newTask(), ALICE);
    const theirs = await other.create(newTask(), ALICE);
    await eventually(
      () => onOther.some((x) => x.taskId === mine.taskId),
      "the other store to hear",
    );
    await eventually(() => onClient.some((x) => x.taskId === theirs.taskId), "the Client to hear");
    // Its own changes come back on its connection, and are delivered once.
    await sleep(50);
    expect(onClient.filter((x) => x.taskId === mine.taskId && x.kind === "created")).toHaveLength(
      1,
    );
    await store.close();
    const { rows } = await c.query("SELECT count(*)::int AS n FROM pg_listening_channels()");
    expect(rows[0].n).toBe(0);
  });
});

describe("migrate and dropTaskSchema through each driver", () => {
  it("apply once through a Pool (concurrently), a Client, and Drizzle databases; drop through any", async () => {
    const schema = freshSchemaName("dm");
    schemas.push(schema);
    const p = pool();
    const results = await Promise.all([1, 2, 3].map(() => migrate(p, { schema })));
    // Every committed migration, once: however many there are by now.
    const all = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER }).length;
    expect(results.map((r) => r.applied.length).sort()).toEqual([0, 0, all]);
    expect((await migrate(await client(), { schema })).applied).toEqual([]);
    expect((await migrate(drizzleNodePostgres({ client: p }), { schema })).applied).toEqual([]);
    expect((await migrate(drizzlePostgresJs({ client: sql() }), { schema })).applied).toEqual([]);
    await dropTaskSchema(drizzleNodePostgres({ client: p }), schema);
    const { rows } = await p.query(
      "SELECT count(*)::int AS n FROM information_schema.schemata WHERE schema_name = $1",
      [schema],
    );
    expect(rows[0].n).toBe(0);

    const overLite = drizzlePGlite({ client: await pglite() });
    expect((await migrate(overLite, { schema: "tenant" })).applied).toHaveLength(all);
    const store = await createTaskStore({ client: overLite, schema: "tenant" });
    await store.create(newTask(), ALICE);
    await store.close();
    await dropTaskSchema(overLite, "tenant");
  });

  it("migrate sends a fresh schema's migrations in one round trip, not one per statement", async () => {
    const schema = freshSchemaName("dm");
    schemas.push(schema);
    const c = await client();
    const sent: string[] = [];
    const query = c.query.bind(c) as (...args: unknown[]) => unknown;
    (c as { query: unknown }).query = (...args: unknown[]) => {
      const first = args[0];
      sent.push(typeof first === "string" ? first : String((first as { text?: unknown }).text));
      return query(...args);
    };
    const all = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER });
    expect((await migrate(c, { schema })).applied).toHaveLength(all.length);
    // BEGIN, the lock and the journal table, the journal's last entry, the migrations, COMMIT;
    // before, each statement of each migration and each journal row went on its own (40 and more).
    expect(sent).toHaveLength(5);
    const script = sent[3] as string;
    for (const m of all) expect(script).toContain(`'${m.hash}'`);
    expect((await migrate(c, { schema })).applied).toEqual([]);
    expect(sent).toHaveLength(9);
  });

  it("createTaskStore migrates first when asked", async () => {
    const schema = freshSchemaName("dm");
    schemas.push(schema);
    const store = await createTaskStore({
      client: drizzleNodePostgres({ client: pool() }),
      schema,
      migrate: true,
    });
    closers.push(() => store.close());
    const task = await store.create(newTask(), ALICE);
    expect(await store.get(task.taskId, ALICE)).toEqual(task);
  });
});

describe("connection problems through node-postgres", () => {
  const unavailable = (e: unknown) => isTaskError(e, "store_unavailable");

  it("an unreachable database: createTaskStore fails with store_unavailable", async () => {
    const p = pool({
      connectionString: "postgres://postgres@127.0.0.1:1/test",
      connectionTimeoutMillis: 2_000,
    });
    await expect(createTaskStore({ client: p })).rejects.toSatisfy(unavailable);
  });

  it("a pool ended under the store: calls fail with store_unavailable", async () => {
    const schema = await freshSchema();
    const p = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    const store = await createTaskStore({ client: p, schema });
    // The pool waits for the store's LISTEN client, which close gives back.
    const ended = p.end();
    await expect(store.get("nope", ALICE)).rejects.toSatisfy(unavailable);
    await expect(store.create(newTask(), ALICE)).rejects.toSatisfy(unavailable);
    await store.close();
    await ended;
  });

  it("a call with no answer fails after operationTimeoutMs", async () => {
    const schema = await freshSchema();
    const c = await client();
    const store = await createTaskStore({ client: c, schema, operationTimeoutMs: 300 });
    closers.push(() => store.close());
    // The Client is busy: every store call queues behind this statement.
    const busy = c.query("SELECT pg_sleep(1)");
    await expect(store.get("nope", ALICE)).rejects.toSatisfy(
      (e: unknown) => unavailable(e) && /within 300 ms/.test((e as Error).message),
    );
    await busy;
  });
});
