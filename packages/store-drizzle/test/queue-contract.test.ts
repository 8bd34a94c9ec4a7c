import { PGlite } from "@electric-sql/pglite";
import { describeQueueStoreContract } from "@mcp-tasks/core/testing";
import { afterAll } from "vitest";
import { createPGliteTaskStore, createPostgresTaskStore } from "../src/index.js";
import {
  CONTRACT_CONNECT_TIMEOUT_S,
  DATABASE_URL,
  dropSchemas,
  freshSchemaName,
  migrateSchema,
} from "./helpers.js";

// The queue contract where the task contract runs: PostgreSQL in both notification modes
// (a schema per store, so each test starts empty) and PGlite (a schema per store in one
// in-memory database).
const schemas: string[] = [];
const db = new PGlite();
afterAll(async () => {
  await dropSchemas(schemas);
  await db.close();
});

for (const notify of ["after-commit", "in-transaction"] as const) {
  describeQueueStoreContract(`PostgreSQL (notify ${notify})`, async ({ clock }) => {
    const schema = freshSchemaName(notify === "after-commit" ? "qa" : "qt");
    schemas.push(schema);
    await migrateSchema(schema);
    return createPostgresTaskStore({
      url: DATABASE_URL,
      schema,
      clock,
      poolSize: 8,
      notify,
      connectTimeoutSeconds: CONTRACT_CONNECT_TIMEOUT_S,
    });
  });
}

describeQueueStoreContract("PGlite (in memory)", ({ clock }) =>
  createPGliteTaskStore({ client: db, schema: freshSchemaName("qp"), migrate: true, clock }),
);
