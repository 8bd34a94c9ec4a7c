import { PGlite } from "@electric-sql/pglite";
import { describeLeasingStoreContract } from "@mcp-tasks/core/testing";
import { afterAll } from "vitest";
import { createPGliteTaskStore, createPostgresTaskStore, migrate } from "../src/index.js";
import { DATABASE_URL, dropSchemas, freshSchemaName } from "./helpers.js";

const schemas: string[] = [];
const db = new PGlite();
afterAll(async () => {
  await dropSchemas(schemas);
  await db.close();
});

describeLeasingStoreContract("PostgreSQL", async ({ clock }) => {
  const schema = freshSchemaName("l");
  schemas.push(schema);
  await migrate(DATABASE_URL, { schema });
  return createPostgresTaskStore({ url: DATABASE_URL, schema, clock, poolSize: 8 });
});

describeLeasingStoreContract("PGlite", ({ clock }) =>
  createPGliteTaskStore({ client: db, schema: freshSchemaName("l"), migrate: true, clock }),
);
