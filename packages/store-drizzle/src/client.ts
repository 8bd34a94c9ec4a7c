import { resolveClient, type TaskStoreClient } from "./drivers.js";
import { BatchedNotifier } from "./feed.js";
import { migrate } from "./migrate.js";
import { nodePostgresExecutor } from "./node-postgres.js";
import { nodePostgresClientSubscribe, nodePostgresPoolSubscribe } from "./node-postgres-listen.js";
import { pgliteBackend } from "./pglite.js";
import { notifyBatch } from "./plans/notify.js";
import { postgresBackend } from "./postgres.js";
import { DrizzleTaskStore, type DrizzleTaskStoreOptions, type StoreBackend } from "./store.js";

/** Settings of {@link createTaskStore}: the connection you have, and the store's options. */
export interface TaskStoreOptions extends DrizzleTaskStoreOptions {
  /**
   * Your connection: a postgres.js client (`sql`), a node-postgres `Pool` or connected
   * `Client`, a PGlite instance, or a Drizzle database over any of them (the store uses
   * `db.$client`). The store never closes it: `close` leaves it open.
   */
  readonly client: TaskStoreClient;
  /** Run {@link migrate} (with the same schema) before opening; default false. */
  readonly migrate?: boolean;
  /**
   * `after-commit` mode: the least time between two NOTIFY batches, in ms; default 5 (see
   * `createPostgresTaskStore`).
   */
  readonly notifyIntervalMs?: number;
}

const keep = async () => {};

/**
 * Opens a task store on a connection the application already has, whichever driver made it:
 * postgres.js, node-postgres (`pg`) or PGlite, directly or through a Drizzle database. One
 * store and one set of statements serve them all; only the executor underneath differs.
 * Resolves once the store listens for other nodes' changes.
 *
 * - postgres.js: as `createPostgresTaskStore({ sql })`; LISTEN on postgres.js's own listener
 *   connection, notification batches through the client.
 * - node-postgres `Pool`: statements through the pool (prepared per connection); LISTEN on one
 *   client checked out for as long as the store is open (give the pool room for it), listened
 *   again on a new one if its connection is lost.
 * - node-postgres `Client`: statements, notification batches and LISTEN share its one
 *   connection, so calls queue behind each other; a lost connection is not re-established.
 * - PGlite: as `createPGliteTaskStore({ client })`, changes announced in the writing statements.
 */
export async function createTaskStore(options: TaskStoreOptions): Promise<DrizzleTaskStore> {
  const resolved = resolveClient(options.client, "createTaskStore: client");
  if (options.migrate) {
    await migrate(options.client, options.schema === undefined ? {} : { schema: options.schema });
  }
  let backend: StoreBackend;
  switch (resolved.driver) {
    case "postgres":
      backend = postgresBackend(resolved.sql, resolved.sql, keep, {
        notifyIntervalMs: options.notifyIntervalMs,
        operationTimeoutMs: options.operationTimeoutMs,
      });
      break;
    case "pglite":
      await resolved.db.waitReady;
      backend = pgliteBackend(resolved.db, keep);
      break;
    case "pg-pool":
    case "pg-client": {
      const target = resolved.driver === "pg-pool" ? resolved.pool : resolved.client;
      const executor = nodePostgresExecutor(target);
      backend = {
        executor,
        subscribe:
          resolved.driver === "pg-pool"
            ? nodePostgresPoolSubscribe(resolved.pool)
            : nodePostgresClientSubscribe(resolved.client),
        sendNotifications: (channel, payloads) => {
          const { text, values } = notifyBatch({ channel, payloads: JSON.stringify(payloads) });
          return executor.query(text, values);
        },
        createNotifier: (send) =>
          new BatchedNotifier(send, { minIntervalMs: options.notifyIntervalMs ?? 5 }),
        release: keep,
      };
      break;
    }
  }
  const defaultNotify = resolved.driver === "pglite" ? "in-transaction" : "after-commit";
  return new DrizzleTaskStore(backend, options, defaultNotify).start();
}
