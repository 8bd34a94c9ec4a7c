import { PGlite } from "@electric-sql/pglite";
import { describeTaskStoreContract } from "@mcp-tasks/core/testing";
import { afterAll } from "vitest";
import { createPGliteTaskStore, type DrizzleTaskStore } from "../src/index.js";
import { freshSchemaName } from "./helpers.js";

// One in-memory database for the file (starting PGlite takes a while), a schema per store.
const db = new PGlite();
afterAll(() => db.close());

describeTaskStoreContract(
  "PGlite (in memory)",
  ({ clock, maxTasks, maxTasksPerOwner, maxBytesPerOwner, maxPageSize }) =>
    createPGliteTaskStore({
      client: db,
      schema: freshSchemaName("pg"),
      migrate: true,
      clock,
      maxPageSize,
      maxTasks: maxTasks ?? null,
      maxTasksPerOwner: maxTasksPerOwner ?? null,
      maxBytesPerOwner: maxBytesPerOwner ?? null,
    }),
  { auditUsage: (store) => (store as DrizzleTaskStore).auditUsage() },
);
