// The exported table definition is the table the committed migrations make, so an
// application can put it in its own schema file and let drizzle-kit create it: drizzle-kit's
// snapshot of `taskTable()` is the committed snapshot, in any schema; the SQL drizzle-kit
// generates for it builds, in PostgreSQL's catalog, exactly the table `migrate()` builds; a
// store runs on that table, and Drizzle queries it.
import { readFileSync } from "node:fs";
import { owner } from "@mcp-tasks/core";
import { type OwnerScope, ownerScope } from "@mcp-tasks/core/store";
import { generateDrizzleJson, generateMigration } from "drizzle-kit/api";
import { eq, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/node-postgres";
import { getTableConfig, pgSchema, pgTable, text } from "drizzle-orm/pg-core";
import pg from "pg";
import { afterAll, describe, expect, expectTypeOf, it } from "vitest";
import {
  createTaskStore,
  MIGRATIONS_FOLDER,
  migrate,
  TASKS_TABLE,
  type TaskRow,
  tasks,
  taskTable,
  taskUsage,
  taskUsageTable,
  USAGE_TABLE,
} from "../src/index.js";
import { DATABASE_URL, dropSchemas, freshSchemaName } from "./helpers.js";

const SCOPE = ownerScope(owner({ principalId: "alice" }), { requireOwner: false }) as OwnerScope;

const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
const schemas: string[] = [];
afterAll(async () => {
  await dropSchemas(schemas);
  await pool.end();
});

// biome-ignore lint/suspicious/noExplicitAny: drizzle-kit's snapshot JSON.
type Snapshot = Record<string, any>;

/** The snapshot drizzle-kit wrote with the newest committed migration. */
function committedSnapshot(): Snapshot {
  const journal = JSON.parse(readFileSync(`${MIGRATIONS_FOLDER}/meta/_journal.json`, "utf8"));
  const last = journal.entries[journal.entries.length - 1];
  const file = `${MIGRATIONS_FOLDER}/meta/${String(last.idx).padStart(4, "0")}_snapshot.json`;
  return JSON.parse(readFileSync(file, "utf8"));
}

/** A snapshot without its identity (each generation draws new ids). */
const content = ({ id: _, prevId: __, ...rest }: Snapshot) => rest;

describe("taskTable and taskUsageTable: the store's tables for an application's own Drizzle schema", () => {
  it("in public, are the tables of the committed migrations (drizzle-kit's snapshot)", () => {
    const committed = content(committedSnapshot());
    expect(content(generateDrizzleJson({ tasks: taskTable(), usage: taskUsageTable() }))).toEqual(
      committed,
    );
    expect(content(generateDrizzleJson({ tasks, taskUsage }))).toEqual(committed);
    expect(getTableConfig(taskTable()).schema).toBeUndefined();
    expect(getTableConfig(taskUsageTable()).schema).toBeUndefined();
  });

  it("in another schema (a name or your pgSchema), is the same table there", () => {
    const committed = committedSnapshot();
    const jobs = pgSchema("jobs");
    for (const exported of [
      { jobs, tasks: taskTable(jobs), usage: taskUsageTable(jobs) },
      { tasks: taskTable("jobs"), usage: taskUsageTable("jobs") },
    ]) {
      const snapshot = generateDrizzleJson(exported);
      expect(Object.keys(snapshot.tables).sort()).toEqual([
        `jobs.${USAGE_TABLE}`,
        `jobs.${TASKS_TABLE}`,
      ]);
      for (const name of [TASKS_TABLE, USAGE_TABLE]) {
        // The same, but for the schema named in it (column references, the identity sequence).
        const inPublic = JSON.stringify(snapshot.tables[`jobs.${name}`])
          .replaceAll('\\"jobs\\".', "")
          .replaceAll('"schema":"jobs"', '"schema":"public"');
        expect(JSON.parse(inPublic)).toEqual({
          ...committed.tables[`public.${name}`],
          schema: "public",
        });
      }
      // drizzle-kit creates the schemas it finds exported.
      expect(snapshot.schemas).toEqual("jobs" in exported ? { jobs: "jobs" } : {});
    }
    expect(getTableConfig(taskTable("jobs")).schema).toBe("jobs");
    expect(getTableConfig(taskUsageTable("jobs")).schema).toBe("jobs");
    expect(() => taskTable("Jobs; DROP")).toThrow(RangeError);
    expect(() => taskTable(pgSchema("Bad-Name"))).toThrow(RangeError);
  });

  it("is typed for Drizzle queries, joins with an application's tables included", () => {
    const projects = pgTable("projects", { id: text("id").primaryKey(), name: text("name") });
    const t = taskTable(pgSchema("jobs"));
    const query = drizzle
      .mock()
      .select({ project: projects.name, id: t.id, status: t.status, seq: t.seq })
      .from(t)
      .innerJoin(projects, eq(projects.id, sql`${t.request} -> 'arguments' ->> 'projectId'`))
      .where(eq(t.ownerKey, "k"));
    expectTypeOf<Awaited<typeof query>>().toEqualTypeOf<
      { project: string | null; id: string; status: string; seq: number }[]
    >();
    expectTypeOf<TaskRow["createdAt"]>().toEqualTypeOf<Date>();
    expect(query.toSQL().sql).toBe(
      `select "projects"."name", "jobs"."mcp_tasks"."id", "jobs"."mcp_tasks"."status", "jobs"."mcp_tasks"."seq" from "jobs"."mcp_tasks" inner join "projects" on "projects"."id" = "jobs"."mcp_tasks"."request" -> 'arguments' ->> 'projectId' where "jobs"."mcp_tasks"."owner_key" = $1`,
    );
  });

  it("drizzle-kit's SQL for it builds the table migrate() builds, and the store runs on it", async () => {
    const viaKit = freshSchemaName("kit");
    const viaMigrate = freshSchemaName("mig");
    schemas.push(viaKit, viaMigrate);
    const own = pgSchema(viaKit);
    const statements = await generateMigration(
      generateDrizzleJson({}),
      generateDrizzleJson({ own, tasks: taskTable(own), usage: taskUsageTable(own) }),
    );
    expect(statements[0]).toBe(`CREATE SCHEMA "${viaKit}";\n`);
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      for (const statement of statements) await client.query(statement);
      await client.query("COMMIT");
    } finally {
      client.release();
    }
    await migrate(pool, { schema: viaMigrate });

    // The catalog's view of each: columns, indexes, constraints, named without the schema.
    const catalog = async (schema: string, table = TASKS_TABLE) => {
      const columns = await pool.query(
        `SELECT column_name, data_type, datetime_precision, is_nullable, column_default,
           is_identity, identity_generation
         FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2
         ORDER BY column_name`,
        [schema, table],
      );
      const indexes = await pool.query(
        `SELECT indexname, replace(indexdef, $1, 'S.') AS def FROM pg_indexes
         WHERE schemaname = $2 AND tablename = $3 ORDER BY indexname`,
        [`${schema}.`, schema, table],
      );
      const constraints = await pool.query(
        `SELECT conname, contype, pg_get_constraintdef(c.oid) AS def FROM pg_constraint AS c
         WHERE conrelid = $1::regclass ORDER BY conname`,
        [`"${schema}"."${table}"`],
      );
      return { columns: columns.rows, indexes: indexes.rows, constraints: constraints.rows };
    };
    const kit = await catalog(viaKit);
    expect(kit.columns).toHaveLength(Object.keys(getTableConfig(tasks).columns).length);
    expect(kit.indexes.length).toBeGreaterThan(4);
    expect(kit.constraints.length).toBeGreaterThan(3);
    expect(kit).toEqual(await catalog(viaMigrate));
    const kitUsage = await catalog(viaKit, USAGE_TABLE);
    expect(kitUsage.columns).toHaveLength(Object.keys(getTableConfig(taskUsage).columns).length);
    expect(kitUsage).toEqual(await catalog(viaMigrate, USAGE_TABLE));

    // The store on the drizzle-kit table, and a Drizzle query of it through the same pool.
    const store = await createTaskStore({ client: pool, schema: viaKit });
    try {
      await store.create(
        {
          taskId: "kit-1",
          era: "2026-07-28",
          request: { toolName: "build", arguments: { projectId: "p1" } },
          ttlMs: null,
          ttlAnchor: "terminal",
          pollIntervalMs: null,
        },
        SCOPE,
      );
      const [claimed] = await store.claim("worker", { limit: 1, leaseMs: 10_000 });
      await store.complete(
        "kit-1",
        { ...SCOPE, fence: { holder: "worker", fencingToken: 1 } },
        {
          ok: true,
        },
      );
      expect(claimed!.execution.attempt).toBe(1);
      const t = taskTable(own);
      const rows = await drizzle({ client: pool })
        .select({ id: t.id, status: t.status, attempt: t.attempt, result: t.result })
        .from(t)
        .where(eq(t.ownerPrincipal, "alice"));
      expect(rows).toEqual([
        { id: "kit-1", status: "completed", attempt: 1, result: { ok: true } },
      ]);
    } finally {
      await store.close();
    }
  });
});
