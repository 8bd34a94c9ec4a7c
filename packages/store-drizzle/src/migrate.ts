import { fileURLToPath } from "node:url";
import { readMigrationFiles } from "drizzle-orm/migrator";
import postgres, { type Sql } from "postgres";
import { executorFor, resolveClient, type TaskStoreClient } from "./drivers.js";
import { mapDriverError } from "./errors.js";
import { checkSchemaName, DEFAULT_SCHEMA } from "./names.js";

/** Where the committed drizzle-kit migrations live (the same relative path from src/ and dist/). */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL("../drizzle", import.meta.url));

/**
 * Where {@link migrate} runs: a PostgreSQL URL, or a connection you have (a postgres.js
 * client, a node-postgres Pool or Client, a PGlite instance, or a Drizzle database over one).
 */
export type MigrationTarget = string | TaskStoreClient;

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

/** Runs `work` on a one-connection client for `url`, closed afterwards. */
async function withConnection<T>(url: string, work: (sql: Sql) => Promise<T>): Promise<T> {
  const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    return await work(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
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
  if (typeof target === "string") return withConnection(target, (sql) => migrate(sql, options));
  const executor = executorFor(resolveClient(target, "migrate"));
  const migrations = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER });
  try {
    return await executor.transaction(async (exec, query) => {
      // Serialise concurrent migrators of this schema (released at commit); the generated
      // SQL names tables without a schema: point it at ours for this transaction.
      await exec(`SELECT pg_advisory_xact_lock(hashtext('mcp-tasks-migrate:${schema}'));
CREATE SCHEMA IF NOT EXISTS "${schema}";
SET LOCAL search_path TO "${schema}";
CREATE TABLE IF NOT EXISTS "${schema}"."__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`);
      const rows = await query(
        `SELECT created_at FROM "${schema}"."__drizzle_migrations" ORDER BY created_at DESC LIMIT 1`,
        [],
      );
      const last = rows[0] === undefined ? -1 : Number(rows[0].created_at);
      const pending = migrations.filter((m) => m.folderMillis > last);
      // Every pending migration and its journal row in one round trip, not one per statement
      // (a fresh schema took 44): still all or nothing, in this transaction.
      const script = pending.flatMap((m) => [
        ...m.sql.filter((statement) => statement.trim().length > 0),
        journalInsert(schema, m.hash, m.folderMillis),
      ]);
      if (script.length > 0) await exec(script.join(";\n"));
      return { applied: pending.map((m) => m.hash) };
    });
  } catch (error) {
    throw mapDriverError(error, "migrate");
  }
}

/** The journal row of one applied migration (its hash is hex, its time a whole number). */
function journalInsert(schema: string, hash: string, folderMillis: number): string {
  if (!/^[0-9a-f]+$/.test(hash) || !Number.isSafeInteger(folderMillis)) {
    throw new Error(
      `a committed migration has an unexpected hash or time: ${hash}, ${folderMillis}`,
    );
  }
  return `INSERT INTO "${schema}"."__drizzle_migrations" (hash, created_at) VALUES ('${hash}', ${folderMillis})`;
}

/**
 * Removes a dedicated schema made by {@link migrate}, with its task table and journal: the
 * teardown of a test run or of a tenant's schema. Missing schemas are fine. Refuses the
 * default `public` schema, which holds more than tasks.
 */
export async function dropTaskSchema(target: MigrationTarget, schema: string): Promise<void> {
  const name = checkSchemaName(schema);
  if (name === DEFAULT_SCHEMA) throw new TypeError(`refusing to drop the ${DEFAULT_SCHEMA} schema`);
  if (typeof target === "string") {
    return withConnection(target, (sql) => dropTaskSchema(sql, name));
  }
  try {
    await executorFor(resolveClient(target, "dropTaskSchema")).transaction(async (exec) => {
      await exec(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
    });
  } catch (error) {
    throw mapDriverError(error, "dropTaskSchema");
  }
}
