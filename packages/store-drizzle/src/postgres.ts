import postgres, { type Sql } from "postgres";
import { postgresExecutor } from "./executor.js";
import { BatchedNotifier, postgresSubscribe } from "./feed.js";
import { migrate } from "./migrate.js";
import { DEFAULT_OPERATION_TIMEOUT_MS } from "./options.js";
import { notifyBatch } from "./plans/notify.js";
import { PLAN_SETTINGS } from "./plans/settings.js";
import { connectBackoffSeconds, Reachability } from "./reachability.js";
import { DrizzleTaskStore, type DrizzleTaskStoreOptions, type StoreBackend } from "./store.js";

/** Settings of {@link createPostgresTaskStore}: a URL (the store owns its pool) or a client. */
export interface PostgresTaskStoreOptions extends DrizzleTaskStoreOptions {
  /** `postgres://user@host:5432/db`. The store opens, and on `close` ends, its own pool. */
  readonly url?: string;
  /** A postgres.js client you own instead of `url`; `close` leaves it open. */
  readonly sql?: Sql;
  /**
   * Pooled connections when the store opens its own pool; default 16. Give it at least as
   * many as the operations you keep in flight: writes pipelined on one connection commit
   * one by one, so they cannot share a WAL flush.
   */
  readonly poolSize?: number;
  /**
   * Connections of a second pool, opened with the main one, that serves only `get` (the
   * poll); default 1, 0 for none (polls share the main pool). Concurrent polls are
   * pipelined on it: one server process answers a burst of them back to back instead of
   * one process each, which on a busy or small database host costs far less CPU and
   * switching. Reads see every write that has returned (each returns after its commit), as
   * on the main pool. Not used with `sql` (a client you own).
   */
  readonly readPoolSize?: number;
  /** Give up connecting after this many seconds; default 5. */
  readonly connectTimeoutSeconds?: number;
  /** `application_name` of the pool's connections (shown in pg_stat_activity); default `mcp-tasks`. */
  readonly applicationName?: string;
  /** Run {@link migrate} (with the same schema) before opening; default false. */
  readonly migrate?: boolean;
  /**
   * `after-commit` mode: the least time between two NOTIFY batches, in ms; default 5. A
   * change after a quiet spell is announced at once; under load, changes are announced in
   * at most one transaction per interval rather than one per write. 0 sends a batch per
   * event-loop turn.
   */
  readonly notifyIntervalMs?: number;
}

/**
 * The store's link to PostgreSQL through postgres.js: statements on `sql`, LISTEN on its
 * dedicated connection, after-commit notification batches on `notifySql`. `link` holds
 * the optional settings (left out or `undefined`: the defaults).
 */
export function postgresBackend(
  sql: Sql,
  notifySql: Sql,
  release: () => Promise<void>,
  link: {
    notifyIntervalMs?: number | undefined;
    operationTimeoutMs?: number | undefined;
    readSql?: Sql | undefined;
  } = {},
): StoreBackend {
  const { notifyIntervalMs = 5, readSql } = link;
  const reachability = new Reachability(link.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS);
  return {
    executor: postgresExecutor(sql, reachability),
    ...(readSql !== undefined && { reads: postgresExecutor(readSql, reachability).query }),
    subscribe: postgresSubscribe(sql),
    sendNotifications: (channel, payloads) => {
      const { text, values } = notifyBatch({ channel, payloads: JSON.stringify(payloads) });
      return notifySql.unsafe(text, values as never[], { prepare: true });
    },
    createNotifier: (send) => new BatchedNotifier(send, { minIntervalMs: notifyIntervalMs }),
    release,
  };
}

/**
 * Opens a task store on a PostgreSQL server through postgres.js. Resolves once the store
 * listens for other nodes' changes. Run {@link migrate} once at start-up first (or pass
 * `migrate: true`).
 */
export async function createPostgresTaskStore(
  options: PostgresTaskStoreOptions,
): Promise<DrizzleTaskStore> {
  const timeoutMs = options.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS;
  const connectTimeout = options.connectTimeoutSeconds ?? 5;
  const readPoolSize = options.readPoolSize ?? 1;
  if (!Number.isSafeInteger(readPoolSize) || readPoolSize < 0) {
    throw new TypeError(`readPoolSize must be a non-negative whole number, got ${readPoolSize}`);
  }
  let sql: Sql;
  let notifySql: Sql;
  let readSql: Sql | undefined;
  let owned: Sql[];
  if (options.sql !== undefined) {
    sql = options.sql;
    notifySql = sql;
    owned = [];
  } else {
    if (options.url === undefined) throw new TypeError("createPostgresTaskStore needs url or sql");
    const url = options.url;
    const name = options.applicationName ?? "mcp-tasks";
    /** One of the store's own pools; they differ only in size, name and statement timeout. */
    const pool = (max: number, suffix: string, statementTimeout: boolean) =>
      postgres(url, {
        max,
        prepare: true,
        // The statements return no native arrays, and the type lookup postgres.js runs on
        // every new connection rejects unhandled when a listener reconnects to a database
        // that is still down.
        fetch_types: false,
        connect_timeout: connectTimeout,
        // Retry refused connects within 0.2 s, not after postgres.js's pause that grows to 20 s.
        backoff: connectBackoffSeconds,
        onnotice: () => {},
        connection: {
          application_name: `${name}${suffix}`,
          ...PLAN_SETTINGS,
          ...(statementTimeout && { statement_timeout: timeoutMs }),
        },
      });
    sql = pool(options.poolSize ?? 16, "", true);
    // A connection of its own, so batches of notifications never wait for a pool slot.
    notifySql = pool(1, "-notify", false);
    owned = [sql, notifySql];
    if (readPoolSize > 0) {
      readSql = pool(readPoolSize, "-read", true);
      owned.push(readSql);
    }
  }
  const release = async () => {
    await Promise.all(owned.map((s) => s.end({ timeout: 2 })));
  };
  if (options.migrate) {
    try {
      await migrate(sql, options.schema === undefined ? {} : { schema: options.schema });
    } catch (error) {
      await release();
      throw error;
    }
  }
  const store = new DrizzleTaskStore(
    postgresBackend(sql, notifySql, release, {
      notifyIntervalMs: options.notifyIntervalMs,
      operationTimeoutMs: timeoutMs,
      readSql,
    }),
    options,
    "after-commit",
  );
  return store.start();
}
