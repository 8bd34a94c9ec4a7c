import type { PGlite } from "@electric-sql/pglite";
import type { Sql } from "postgres";
import { type Executor, pgliteExecutor, postgresExecutor } from "./executor.js";
import {
  isNodePostgresClient,
  isNodePostgresPool,
  type NodePostgresClient,
  type NodePostgresPool,
  nodePostgresExecutor,
} from "./node-postgres.js";
import { DEFAULT_OPERATION_TIMEOUT_MS } from "./options.js";
import { Reachability } from "./reachability.js";

/**
 * A connection the application already has: a postgres.js client (`sql`), a node-postgres
 * `Pool` or `Client` (connected), or a PGlite instance.
 */
export type DatabaseClient = Sql | NodePostgresPool | NodePostgresClient | PGlite;

/**
 * A Drizzle database (`drizzle(...)` from `drizzle-orm/postgres-js`, `drizzle-orm/node-postgres`
 * or `drizzle-orm/pglite`): the store uses the client underneath (`db.$client`).
 */
export interface DrizzleDatabase {
  readonly $client: DatabaseClient;
}

/** What the store, `migrate` and `dropTaskSchema` accept as the application's connection. */
export type TaskStoreClient = DatabaseClient | DrizzleDatabase;

/** A client, told apart by driver. */
export type ResolvedClient =
  | { readonly driver: "postgres"; readonly sql: Sql }
  | { readonly driver: "pglite"; readonly db: PGlite }
  | { readonly driver: "pg-pool"; readonly pool: NodePostgresPool }
  | { readonly driver: "pg-client"; readonly client: NodePostgresClient };

/** True for a PGlite instance (or anything with its `exec`/`query`/`listen`). */
export function isPGlite(value: unknown): value is PGlite {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as PGlite).exec === "function" &&
    typeof (value as PGlite).query === "function" &&
    typeof (value as PGlite).listen === "function"
  );
}

function isPostgresJs(value: unknown): value is Sql {
  return (
    typeof value === "function" &&
    typeof (value as Sql).unsafe === "function" &&
    typeof (value as Sql).begin === "function"
  );
}

/**
 * Tells which driver `client` belongs to; a Drizzle database is replaced by its `$client`.
 * Throws a TypeError naming what is accepted for anything else.
 */
export function resolveClient(client: unknown, what = "client"): ResolvedClient {
  let target = client;
  if (typeof target === "object" && target !== null && "$client" in target) {
    target = (target as { $client: unknown }).$client;
    if (typeof target !== "object" && typeof target !== "function") {
      throw new TypeError(`${what}: this Drizzle database has no client (drizzle.mock()?)`);
    }
  }
  if (isPostgresJs(target)) return { driver: "postgres", sql: target };
  if (isPGlite(target)) return { driver: "pglite", db: target };
  if (isNodePostgresPool(target)) return { driver: "pg-pool", pool: target };
  if (isNodePostgresClient(target)) return { driver: "pg-client", client: target };
  throw new TypeError(
    `${what} must be a postgres.js client, a node-postgres Pool or Client, a PGlite instance, or a Drizzle database over one of them`,
  );
}

/** An executor for a resolved client. */
export function executorFor(resolved: ResolvedClient): Executor {
  switch (resolved.driver) {
    case "postgres":
      return postgresExecutor(resolved.sql, new Reachability(DEFAULT_OPERATION_TIMEOUT_MS));
    case "pglite":
      return pgliteExecutor(resolved.db);
    case "pg-pool":
      return nodePostgresExecutor(resolved.pool);
    case "pg-client":
      return nodePostgresExecutor(resolved.client);
  }
}
