import { randomBytes } from "node:crypto";
import { dropTaskSchema } from "./migrate.js";
import { createPostgresTaskStore, type PostgresTaskStoreOptions } from "./postgres.js";
import type { DrizzleTaskStore } from "./store.js";

/** Settings of {@link openScratchTaskStore}. */
export interface ScratchTaskStoreOptions
  extends Omit<PostgresTaskStoreOptions, "url" | "sql" | "schema" | "migrate"> {
  /** The database to make the schema in, e.g. `postgres://postgres@127.0.0.1:5432/test`. */
  readonly url: string;
  /** Start of the schema's name (letters, digits, `_`); default `scratch`. */
  readonly prefix?: string;
}

/** A store in a schema of its own; {@link ScratchTaskStore.dispose} removes both. */
export interface ScratchTaskStore {
  readonly store: DrizzleTaskStore;
  /** The fresh schema's name: `<prefix>_<pid>_<random>`. */
  readonly schema: string;
  /** Closes the store, then drops its schema with every task in it. */
  dispose(): Promise<void>;
}

/**
 * Opens a PostgreSQL task store in a fresh, migrated schema, for one test (or one test
 * file): tests running in parallel on one database never see each other's tasks, and
 * `dispose` leaves the database as it was.
 *
 * ```ts
 * const scratch = await openScratchTaskStore({ url: "postgres://postgres@127.0.0.1:5432/test" });
 * try {
 *   // ... use scratch.store ...
 * } finally {
 *   await scratch.dispose();
 * }
 * ```
 */
export async function openScratchTaskStore(
  options: ScratchTaskStoreOptions,
): Promise<ScratchTaskStore> {
  const { prefix = "scratch", url, ...storeOptions } = options;
  const schema = `${prefix}_${process.pid}_${randomBytes(5).toString("hex")}`;
  const store = await createPostgresTaskStore({ ...storeOptions, url, schema, migrate: true });
  let disposed: Promise<void> | undefined;
  return {
    store,
    schema,
    dispose() {
      disposed ??= (async () => {
        try {
          await store.close();
        } finally {
          await dropTaskSchema(url, schema);
        }
      })();
      return disposed;
    },
  };
}
