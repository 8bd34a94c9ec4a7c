import { describeTaskStoreContract } from "@mcp-tasks/core/testing";
import { afterAll } from "vitest";
import { createPostgresTaskStore, type DrizzleTaskStore } from "../src/index.js";
import {
  CONTRACT_CONNECT_TIMEOUT_S,
  DATABASE_URL,
  dropSchemas,
  freshSchemaName,
  migrateSchema,
} from "./helpers.js";

// Every store the suite opens gets its own schema, so each test starts empty.
const schemas: string[] = [];
afterAll(() => dropSchemas(schemas));

for (const notify of ["after-commit", "in-transaction"] as const) {
  describeTaskStoreContract(
    `PostgreSQL (notify ${notify})`,
    async ({ clock, maxTasks, maxTasksPerOwner, maxBytesPerOwner, maxPageSize }) => {
      const schema = freshSchemaName(notify === "after-commit" ? "ca" : "ct");
      schemas.push(schema);
      await migrateSchema(schema);
      return createPostgresTaskStore({
        url: DATABASE_URL,
        schema,
        clock,
        maxPageSize,
        maxTasks: maxTasks ?? null,
        maxTasksPerOwner: maxTasksPerOwner ?? null,
        maxBytesPerOwner: maxBytesPerOwner ?? null,
        poolSize: 8,
        connectTimeoutSeconds: CONTRACT_CONNECT_TIMEOUT_S,
        notify,
      });
    },
    { auditUsage: (store) => (store as DrizzleTaskStore).auditUsage() },
  );
}
