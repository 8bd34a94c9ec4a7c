import { fileURLToPath } from "node:url";
import type { PGlite } from "@electric-sql/pglite";
import { readMigrationFiles } from "drizzle-orm/migrator";
import postgres, { type Sql } from "postgres";
import { mapDriverError } from "./errors.js";
import { type Executor, pgliteExecutor, postgresExecutor } from "./executor.js";
import { checkSchemaName, DEFAULT_SCHEMA } from "./names.js";

/** Where the committed drizzle-kit migrations live (the same relative path from src/ and dist/). */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL("../drizzle", import.meta.url));

/** Where {@link migrate} runs: a PostgreSQL URL, a postgres.js client, or a PGlite instance. */
export type MigrationTarget = string | Sql | PGlite;

/** Options of {@link migrate}. */
export interface MigrateOptions {
  /** The schema that holds the task table and its migration journal; default `public`. */
  readonly schema?: string;
}

/** What {@link migrate} did. */
export interface MigrateResult {
  /** Hashes of the migrations applied by this call (empty when the schema was up to date). */
  readonly applied: readonly string[];
}

function isPGlite(target: unknown): target is PGlite {
  return (
    typeof target === "object" &&
    target !== null &&
    typeof (target as PGlite).exec === "function" &&
    typeof (target as PGlite).query === "function"
  );
}

/**
 * Brings the task table in `schema` up to date with the committed drizzle-kit migrations.
 * Call it at start-up, before opening a store. It is safe when several nodes start at once:
 * everything runs in one transaction holding a transaction-level advisory lock keyed by the
 * schema, so the second node waits, then finds nothing left to do. Applied migrations are
 * recorded in `<schema>.__drizzle_migrations`, the table drizzle-orm's own migrator uses.
 */
export async function migrate(
  target: MigrationTarget,
  options: MigrateOptions = {},
): Promise<MigrateResult> {
  const schema = checkSchemaName(options.schema ?? DEFAULT_SCHEMA);
  if (typeof target === "string") {
    const sql = postgres(target, { max: 1, onnotice: () => {}, connect_timeout: 10 });
    try {
      return await migrate(sql, options);
    } finally {
      await sql.end({ timeout: 5 });
    }
  }
  const executor: Executor = isPGlite(target) ? pgliteExecutor(target) : postgresExecutor(target);
  const migrations = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER });
  try {
    return await executor.transaction(async (exec, query) => {
      // Serialise concurrent migrators of this schema; released at commit.
      await query("SELECT pg_advisory_xact_lock(hashtext($1))", [`mcp-tasks-migrate:${schema}`]);
      await exec(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      // The generated SQL names tables without a schema: point it at ours for this transaction.
      await exec(`SET LOCAL search_path TO "${schema}"`);
      await exec(
        `CREATE TABLE IF NOT EXISTS "${schema}"."__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`,
      );
      const rows = await query(
        `SELECT created_at FROM "${schema}"."__drizzle_migrations" ORDER BY created_at DESC LIMIT 1`,
        [],
      );
      const last = rows[0] === undefined ? -1 : Number(rows[0].created_at);
      const applied: string[] = [];
      for (const migration of migrations) {
        if (migration.folderMillis <= last) continue;
        for (const statement of migration.sql) {
          if (statement.trim().length > 0) await exec(statement);
        }
        await query(
          `INSERT INTO "${schema}"."__drizzle_migrations" (hash, created_at) VALUES ($1, $2)`,
          [migration.hash, migration.folderMillis],
        );
        applied.push(migration.hash);
      }
      return { applied };
    });
  } catch (error) {
    throw mapDriverError(error, "migrate");
  }
}
