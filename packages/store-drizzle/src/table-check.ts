import { getTableColumns } from "drizzle-orm";
import { isMissingTableOrColumn, mapDriverError } from "./errors.js";
import type { Executor } from "./executor.js";
import { qualifiedTable, qualifiedUsageTable } from "./names.js";
import { taskTable, taskUsageTable } from "./schema.js";

/**
 * Thrown by the store factories when the schema does not hold the tables this version of the
 * store needs: `migrate()` never ran there (or ran for an older release, before a column the
 * statements now use). Nothing was written; the factory has released what it opened.
 */
export class TaskTablesNotMigratedError extends Error {
  override readonly name = "TaskTablesNotMigratedError";
  /** Always `tables_not_migrated`, for callers that switch on codes. */
  readonly code = "tables_not_migrated";
  /** The schema the store was opened on. */
  readonly schema: string;

  /** `missing`: PostgreSQL's words for what it did not find (a table, a column). */
  constructor(schema: string, missing: string, options?: ErrorOptions) {
    super(
      `the task tables in schema "${schema}" are missing or older than this release (${missing}): ` +
        `run migrate() once at start-up (or open the store with migrate: true), or apply this ` +
        `release's migrations with drizzle-kit if you own the tables`,
      options,
    );
    this.schema = schema;
  }
}

/** `SELECT` of every column of `table`'s Drizzle definition, returning no row. */
function probeOf(qualified: string, columns: Record<string, { name: string }>): string {
  const names = Object.values(columns).map((c) => `"${c.name}"`);
  return `SELECT ${names.join(", ")} FROM ${qualified} WHERE false`;
}

/**
 * Checks, before the store takes any call, that `schema` has both tables with every column
 * the statements use: the columns of the Drizzle definitions (`schema.ts`), which the
 * migrations are generated from, so the check keeps no list of its own. Otherwise the first
 * call would fail with the driver's `relation "…" does not exist`. The migration journal is
 * not read: tables made by the application's own drizzle-kit migrations are as good as
 * `migrate()`'s.
 */
export async function checkTaskTables(script: Executor["script"], schema: string): Promise<void> {
  // Both probes in one round trip, at open.
  const probes = [
    probeOf(qualifiedTable(schema), getTableColumns(taskTable(schema))),
    probeOf(qualifiedUsageTable(schema), getTableColumns(taskUsageTable(schema))),
  ];
  try {
    await script(probes.join(";\n"));
  } catch (error) {
    if (isMissingTableOrColumn(error)) {
      throw new TaskTablesNotMigratedError(schema, (error as Error).message, { cause: error });
    }
    throw mapDriverError(error, "open");
  }
}
