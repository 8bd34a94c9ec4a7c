import { PGlite } from "@electric-sql/pglite";
import { describeQueueStoreContract, describeTaskStoreContract } from "@mcp-tasks/core/testing";
import { drizzle as drizzleNodePostgres } from "drizzle-orm/node-postgres";
import { drizzle as drizzlePGlite } from "drizzle-orm/pglite";
import { drizzle as drizzlePostgresJs } from "drizzle-orm/postgres-js";
import pg from "pg";
import postgres from "postgres";
import { afterAll } from "vitest";
import { createTaskStore, migrate, type TaskStoreClient } from "../src/index.js";
import { DATABASE_URL, dropSchemas, freshSchemaName } from "./helpers.js";

// The core task and queue contracts on the connections an application brings to
// `createTaskStore`: a node-postgres Pool, and a Drizzle database over each driver (the
// store takes `db.$client`). postgres.js and PGlite given directly run in
// contract-postgres/contract-pglite. One notification mode each (the driver's default), one
// client per file shared by its stores, a schema per store, so each test starts empty.
// `migrate` runs through the same connection.
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 8 });
const overPg = drizzleNodePostgres({ connection: { connectionString: DATABASE_URL, max: 8 } });
const sql = postgres(DATABASE_URL, { max: 8, onnotice: () => {} });
const overPostgresJs = drizzlePostgresJs({ client: sql });
const lite = new PGlite();
const overPGlite = drizzlePGlite({ client: lite });

const schemas: string[] = [];
// Dropping every driver's schemas is the slowest cleanup of the suite: on a loaded two-core
// machine it outlasted the default 30 s hook bound once, so it gets its own.
afterAll(async () => {
  await dropSchemas(schemas);
  await Promise.all([pool.end(), overPg.$client.end(), sql.end({ timeout: 5 }), lite.close()]);
}, 120_000);

const drivers: [name: string, client: TaskStoreClient, prefix: string, onServer: boolean][] = [
  ["node-postgres Pool", pool, "dp", true],
  ["Drizzle over node-postgres", overPg, "dn", true],
  ["Drizzle over postgres.js", overPostgresJs, "dj", true],
  ["Drizzle over PGlite", overPGlite, "dl", false],
];

for (const [name, client, prefix, onServer] of drivers) {
  const fresh = async (kind: string) => {
    const schema = freshSchemaName(`${prefix}${kind}`);
    // PGlite's schemas go with its in-memory database.
    if (onServer) schemas.push(schema);
    await migrate(client, { schema });
    return schema;
  };

  describeTaskStoreContract(
    name,
    async ({ clock, maxTasks, maxTasksPerOwner, maxBytesPerOwner, maxPageSize }) =>
      createTaskStore({
        client,
        schema: await fresh("t"),
        clock,
        maxPageSize,
        maxTasks: maxTasks ?? null,
        maxTasksPerOwner: maxTasksPerOwner ?? null,
        maxBytesPerOwner: maxBytesPerOwner ?? null,
      }),
  );

  describeQueueStoreContract(name, async ({ clock }) =>
    createTaskStore({ client, schema: await fresh("q"), clock }),
  );
}
