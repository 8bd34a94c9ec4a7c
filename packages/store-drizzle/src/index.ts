/**
 * `@mcp-tasks/store-drizzle`: a durable task store for `@mcp-tasks/core` on PostgreSQL
 * (postgres.js or node-postgres, directly or through Drizzle) or embedded PGlite, with a
 * Drizzle schema and drizzle-kit migrations.
 *
 * @packageDocumentation
 */
export { createTaskStore, type TaskStoreOptions } from "./client.js";
export type { DatabaseClient, DrizzleDatabase, TaskStoreClient } from "./drivers.js";
export { isConnectionError, mapDriverError } from "./errors.js";
export {
  dropTaskSchema,
  MIGRATIONS_FOLDER,
  type MigrateOptions,
  type MigrateResult,
  type MigrationTarget,
  migrate,
} from "./migrate.js";
export { channelName, DEFAULT_SCHEMA } from "./names.js";
export type {
  NodePostgresClient,
  NodePostgresNotification,
  NodePostgresPool,
  NodePostgresPoolClient,
  NodePostgresQuery,
  NodePostgresTypes,
} from "./node-postgres.js";
export { createPGliteTaskStore, type PGliteTaskStoreOptions } from "./pglite.js";
export { createPostgresTaskStore, type PostgresTaskStoreOptions } from "./postgres.js";
export {
  TASKS_TABLE,
  type TaskRow,
  type TaskTable,
  type TaskUsageTable,
  tasks,
  taskTable,
  taskUsage,
  taskUsageTable,
  USAGE_TABLE,
} from "./schema.js";
export type { NotifyMode } from "./store.js";
export {
  DrizzleTaskStore,
  type DrizzleTaskStoreOptions,
  MAX_TTL_MS,
} from "./store.js";
export { TaskTablesNotMigratedError } from "./table-check.js";
