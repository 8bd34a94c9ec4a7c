// A database migrated before the queue (0000 only, with tasks in it) is brought up to date
// by migrate() and read by the new store: running tasks with a lease holder are their first
// run, the others are queued, the tool name is backfilled from the request.
import { PGlite } from "@electric-sql/pglite";
import { owner } from "@mcp-tasks/core";
import { type OwnerScope, ownerKey, ownerScope } from "@mcp-tasks/core/store";
import { readMigrationFiles } from "drizzle-orm/migrator";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import {
  createPGliteTaskStore,
  createPostgresTaskStore,
  type DrizzleTaskStore,
  MIGRATIONS_FOLDER,
  migrate,
} from "../src/index.js";
import { DATABASE_URL, dropSchemas, freshSchemaName } from "./helpers.js";

const ALICE = owner({ principalId: "alice" });
const SCOPE = ownerScope(ALICE, { requireOwner: false }) as OwnerScope;

/** Runs SQL text (several commands allowed) in the schema. */
type Exec = (text: string) => Promise<unknown>;

/** Migrates `schema` with the first migration only, as the previous release did. */
async function migrateToInit(exec: Exec, schema: string): Promise<void> {
  const [init] = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER });
  await exec(`CREATE SCHEMA "${schema}"`);
  for (const statement of init!.sql) await exec(statement);
  await exec(
    `CREATE TABLE "${schema}"."__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint);
     INSERT INTO "${schema}"."__drizzle_migrations" (hash, created_at) VALUES ('${init!.hash}', ${init!.folderMillis})`,
  );
}

/** Old rows: held, queued (never leased), lease given back (old style), finished. */
async function insertOldRows(exec: Exec): Promise<void> {
  const key = ownerKey(ALICE).replaceAll("'", "''");
  const row = (id: string, status: string, holder: string, expires: string) =>
    `('${id}', '${key}', 'alice', '2026-07-28', '${status}', '{"toolName":"tool-${id}","arguments":{}}',
      NULL, 'creation', now(), now(), ${holder}, ${expires})`;
  await exec(
    `INSERT INTO mcp_tasks (id, owner_key, owner_principal, era, status, request, ttl_ms, ttl_anchor,
      created_at, updated_at, lease_holder, lease_expires_at) VALUES
     ${row("held", "working", "'old-node'", "now() + interval '1 hour'")},
     ${row("unleased", "input_required", "NULL", "NULL")},
     ${row("released", "working", "NULL", "now() - interval '1 second'")},
     ${row("done", "completed", "NULL", "NULL")}`,
  );
}

async function checkUpgraded(
  store: DrizzleTaskStore,
  applied: readonly string[],
  table: string,
): Promise<void> {
  const migrations = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER });
  expect(applied).toEqual(migrations.slice(1).map((m) => m.hash));
  const held = await store.get("held", SCOPE);
  expect(held.execution).toMatchObject({
    attempt: 1,
    fencingToken: 1,
    holder: "old-node",
    maxAttempts: 1,
    backoffMs: 1000,
    retryOnError: false,
    deadlineMs: null,
    availableAt: null,
  });
  expect(held.execution.leaseExpiresAt).toBeGreaterThan(Date.now());
  expect(held.inputAnswers).toEqual({});
  for (const id of ["unleased", "released", "done"]) {
    expect((await store.get(id, SCOPE)).execution).toMatchObject({
      attempt: 0,
      fencingToken: 0,
      holder: null,
      leaseExpiresAt: null,
    });
  }
  const tools = await store.query(`SELECT id, tool_name FROM ${table} ORDER BY seq`);
  expect(tools.map((r) => [r.id, r.tool_name])).toEqual(
    ["held", "unleased", "released", "done"].map((id) => [id, `tool-${id}`]),
  );
  // The byte quota's column is backfilled: each row's arguments ({}) are 2 bytes.
  const bytes = await store.query(`SELECT id, payload_bytes FROM ${table} ORDER BY seq`);
  expect(bytes.map((r) => [r.id, Number(r.payload_bytes)])).toEqual(
    ["held", "unleased", "released", "done"].map((id) => [id, 2]),
  );
  // The quota usage counters are backfilled from the rows: four tasks of 2 bytes each.
  const usage = await store.auditUsage();
  expect(usage.counters).toEqual({
    tasks: 4,
    owners: { [ownerKey(ALICE)]: { tasks: 4, bytes: 8 } },
  });
  expect(usage.counters).toEqual(usage.recount);
  // The running tasks nobody holds are the queue now; the held one is not an orphan yet.
  const claimed = await store.claim("new-node", { limit: 10, leaseMs: 1000 });
  expect(claimed.map((t) => t.taskId)).toEqual(["unleased", "released"]);
  expect(await store.recoverOrphans()).toEqual({
    requeued: 0,
    failed: 0,
    failedTasks: [],
    cancelled: 0,
    cancelledTasks: [],
  });
  // The fence of the old run (token 1) is the new store's too.
  const old = { ...SCOPE, fence: { holder: "old-node", fencingToken: 1 } };
  expect(await store.renewLease("held", old, 1000)).toBe(true);
  expect((await store.complete("held", old, {})).status).toBe("completed");
  const after = await store.auditUsage();
  expect(after.counters).toEqual(after.recount);
}

describe("upgrading a database migrated before the queue", () => {
  const schemas: string[] = [];
  afterAll(() => dropSchemas(schemas));

  it("PostgreSQL", async () => {
    const schema = freshSchemaName("u");
    schemas.push(schema);
    const sql = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
    try {
      await sql.unsafe(`SET search_path TO "${schema}"`);
      const exec: Exec = (text) => sql.unsafe(text);
      await migrateToInit(exec, schema);
      await insertOldRows(exec);
      const { applied } = await migrate(DATABASE_URL, { schema });
      const store = await createPostgresTaskStore({ url: DATABASE_URL, schema, poolSize: 2 });
      try {
        await checkUpgraded(store, applied, `"${schema}".mcp_tasks`);
      } finally {
        await store.close();
      }
      expect((await migrate(DATABASE_URL, { schema })).applied).toEqual([]);
    } finally {
      await sql.end({ timeout: 5 });
    }
  });

  it("PGlite", async () => {
    const db = new PGlite();
    try {
      const schema = "public";
      await migrateToInit(
        (text) => db.exec(text.replace(`CREATE SCHEMA "public"`, "SELECT 1")),
        schema,
      );
      await insertOldRows((text) => db.exec(text));
      const { applied } = await migrate(db);
      const store = await createPGliteTaskStore({ client: db });
      try {
        await checkUpgraded(store, applied, "mcp_tasks");
      } finally {
        await store.close();
      }
    } finally {
      await db.close();
    }
  });
});
