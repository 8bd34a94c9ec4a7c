import { randomBytes } from "node:crypto";
import { createPostgresTaskStore } from "@mcp-tasks/store-drizzle";
import postgres from "postgres";
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
        const sql = postgres(DATABASE_URL, { max: 1, onnotice: () => {}, connect_timeout: 5 });
        try {
          await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        } finally {
          await sql.end({ timeout: 5 });
        }
      },
    };
  },
};
