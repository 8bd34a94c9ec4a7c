import { PGlite } from "@electric-sql/pglite";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import {
  createPGliteTaskStore,
  createPostgresTaskStore,
  createTaskStore,
  migrate,
  TaskTablesNotMigratedError,
} from "../src/index.js";
import { connectionsNamed, DATABASE_URL, dropSchemas, freshSchemaName } from "./helpers.js";

const schemas: string[] = [];
afterAll(() => dropSchemas(schemas));

/** What opening a store threw (it must throw a {@link TaskTablesNotMigratedError}). */
async function refusal(open: () => Promise<unknown>): Promise<TaskTablesNotMigratedError> {
  const error = await open().then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TaskTablesNotMigratedError);
  return error as TaskTablesNotMigratedError;
}

describe("a store opened on a schema without its tables says so, naming migrate()", () => {
  it("PostgreSQL: a schema never migrated, and nothing left open", async () => {
    const schema = freshSchemaName("nomig");
    schemas.push(schema);
    const applicationName = `mcp-tasks-nomig-${process.pid}`;
    const error = await refusal(() =>
      createPostgresTaskStore({ url: DATABASE_URL, schema, applicationName }),
    );
    expect(error.code).toBe("tables_not_migrated");
    expect(error.schema).toBe(schema);
    expect(error.message).toContain(`relation "${schema}.mcp_tasks" does not exist`);
    expect(error.message).toContain("run migrate()");
    expect(await connectionsNamed(applicationName)).toBe(0);
    // Migrated, the same options open a store.
    await migrate(DATABASE_URL, { schema });
    const store = await createPostgresTaskStore({ url: DATABASE_URL, schema, applicationName });
    await store.close();
  });

  it("PostgreSQL: tables of an older release, or without the usage counters", async () => {
    const [older, noUsage] = [freshSchemaName("oldmig"), freshSchemaName("nousage")];
    schemas.push(older, noUsage);
    const sql = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
    try {
      await migrate(sql, { schema: older });
      // A column the statements use (as before migration 0006) is missing.
      await sql.unsafe(`ALTER TABLE "${older}".mcp_tasks DROP COLUMN tool_name`);
      const error = await refusal(() => createTaskStore({ client: sql, schema: older }));
      expect(error.message).toContain(`column "tool_name" does not exist`);
      // A client the caller owns stays open.
      expect((await sql`select 1 as one`)[0]?.one).toBe(1);
      await migrate(sql, { schema: noUsage });
      await sql.unsafe(`DROP TABLE "${noUsage}".mcp_task_usage`);
      const usage = await refusal(() => createTaskStore({ client: sql, schema: noUsage }));
      expect(usage.message).toContain(`relation "${noUsage}.mcp_task_usage" does not exist`);
    } finally {
      await sql.end({ timeout: 5 });
    }
  });

  it("PGlite: an embedded database without the tables; a PGlite the caller owns stays open", async () => {
    const error = await refusal(() => createPGliteTaskStore());
    expect(error.message).toContain(`relation "public.mcp_tasks" does not exist`);
    const db = new PGlite();
    try {
      await refusal(() => createPGliteTaskStore({ client: db }));
      expect(db.closed).toBe(false);
      const store = await createPGliteTaskStore({ client: db, migrate: true });
      await store.close();
    } finally {
      await db.close();
    }
  });
});
