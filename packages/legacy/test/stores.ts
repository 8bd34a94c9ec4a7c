import { openScratchTaskStore } from "@mcp-tasks/store-drizzle/testing";
import type { StoreFactory } from "./fixtures.js";

/** The test database, as in `@mcp-tasks/store-drizzle`'s own tests; override with DATABASE_URL. */
const DATABASE_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** The PostgreSQL store (`@mcp-tasks/store-drizzle`), in a fresh schema per test, dropped after. */
export const postgresStore: StoreFactory = {
  name: "postgres",
  async create() {
    const { store, dispose } = await openScratchTaskStore({
      url: DATABASE_URL,
      prefix: "legacy",
      poolSize: 4,
    });
    return { store, close: dispose };
  },
};
