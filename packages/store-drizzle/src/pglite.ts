import { mkdirSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { pgliteExecutor } from "./executor.js";
import { BatchedNotifier, pgliteSubscribe } from "./feed.js";
import { migrate } from "./migrate.js";
import { DrizzleTaskStore, type DrizzleTaskStoreOptions, type StoreBackend } from "./store.js";

/** Settings of {@link createPGliteTaskStore}. */
export interface PGliteTaskStoreOptions extends DrizzleTaskStoreOptions {
  /**
   * A directory for a file-backed database (created when missing). Without it, and without
   * `client`, the database lives in memory. The store closes a database it opened.
   */
  readonly dataDir?: string;
  /** A PGlite instance you own instead of `dataDir`; `close` leaves it open. */
  readonly client?: PGlite;
  /** Run {@link migrate} (with the same schema) before opening; default false. */
  readonly migrate?: boolean;
}

/**
 * The store's link to a PGlite instance: statements and LISTEN in process; changes are
 * announced by the writing statements themselves (there is no connection to batch on).
 */
export function pgliteBackend(db: PGlite, release: () => Promise<void>): StoreBackend {
  return {
    executor: pgliteExecutor(db),
    subscribe: pgliteSubscribe(db),
    sendNotifications: null,
    createNotifier: (send) => new BatchedNotifier(send),
    release,
  };
}

/**
 * Opens a task store on an embedded PGlite database: the same schema, statements and
 * semantics as on a PostgreSQL server, in one process. Changes are announced with NOTIFY in
 * the writing statement, so every store sharing the PGlite instance sees them.
 */
export async function createPGliteTaskStore(
  options: PGliteTaskStoreOptions = {},
): Promise<DrizzleTaskStore> {
  const owned = options.client === undefined;
  const dir = options.dataDir;
  // PGlite creates the directory but not its parents.
  if (owned && dir !== undefined && !/^[a-z]+:\/\//.test(dir)) mkdirSync(dir, { recursive: true });
  const db = options.client ?? new PGlite(dir);
  const release = async () => {
    if (owned && !db.closed) await db.close();
  };
  try {
    await db.waitReady;
    if (options.migrate) {
      await migrate(db, options.schema === undefined ? {} : { schema: options.schema });
    }
  } catch (error) {
    await release().catch(() => {});
    throw error;
  }
  const store = new DrizzleTaskStore(pgliteBackend(db, release), options, "in-transaction");
  return store.start();
}
