import { randomBytes } from "node:crypto";
import { createPostgresTaskStore, dropTaskSchema } from "@mcp-tasks/store-drizzle";
import type { StoreFactory } from "./fixtures.js";

/** The test database, as in `@mcp-tasks/store-drizzle`'s own tests; override with DATABASE_URL. */
const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** The PostgreSQL store (`@mcp-tasks/store-drizzle`), in a fresh schema per test, dropped after. */
export const postgresStore: StoreFactory = {
  name: "postgres",
  async create() {
    const schema = `legacy_${process.pid}_${randomBytes(5).toString("hex")}`;
    const store = await createPostgresTaskStore({
      url: DATABASE_URL,
      schema,
      migrate: true,
      poolSize: 4,
    });
    return {
      store,
      async close() {
        await store.close();
        await dropTaskSchema(DATABASE_URL, schema);
      },
    };
  },
};
