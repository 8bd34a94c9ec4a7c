import { createHash } from "node:crypto";

/** The table name. The schema is chosen at run time (see `migrate` and the store options). */
export const TASKS_TABLE = "mcp_tasks";

/** The quota usage counters' table (see `taskUsageTable`). */
export const USAGE_TABLE = "mcp_task_usage";

/** The schema used when none is given. */
export const DEFAULT_SCHEMA = "public";

/**
 * Checks a schema name. Only plain lower-case identifiers are accepted, because the name is
 * spliced into statements, the LISTEN channel and the advisory-lock key.
 */
export function checkSchemaName(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,40}$/.test(schema)) {
    throw new RangeError(
      `schema must be a lower-case SQL identifier of at most 41 characters, got '${schema}'`,
    );
  }
  return schema;
}

/** `"schema"."mcp_tasks"`. */
export function qualifiedTable(schema: string): string {
  return `"${checkSchemaName(schema)}"."${TASKS_TABLE}"`;
}

/** `"schema"."mcp_task_usage"`. */
export function qualifiedUsageTable(schema: string): string {
  return `"${checkSchemaName(schema)}"."${USAGE_TABLE}"`;
}

/** The LISTEN/NOTIFY channel: one per schema, so that stores in other schemas hear nothing. */
export function channelName(schema: string): string {
  return `mcp_tasks_${checkSchemaName(schema)}`;
}

/**
 * The name a statement is prepared under (node-postgres, PGlite): derived from its text, so
 * one name always means one text on every connection (node-postgres refuses a name reused
 * for another text), and stores in other schemas, whose texts differ, never collide.
 */
export function statementName(text: string): string {
  return `mcp_tasks_${createHash("sha256").update(text).digest("hex").slice(0, 32)}`;
}
