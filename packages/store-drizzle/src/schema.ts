import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  check,
  index,
  integer,
  jsonb,
  type PgSchema,
  type PgTableFn,
  pgSchema,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
} from "drizzle-orm/pg-core";
import { checkSchemaName, DEFAULT_SCHEMA, TASKS_TABLE, USAGE_TABLE } from "./names.js";

export { TASKS_TABLE, USAGE_TABLE };

const ms3 = { withTimezone: true, precision: 3 } as const;

/**
 * The task table, defined with `table` (`pgTable`, or a `pgSchema(name).table`). Everything a
 * statement filters or sorts on is a real column; payloads are jsonb. Timestamps are
 * `timestamptz(3)` because task timestamps are milliseconds.
 *
 * The owner is stored twice on purpose: the three parts (nullable, returned as they are, so
 * the owner round-trips exactly) and `owner_key`, core's canonical `ownerKey(owner)` (the
 * empty string for unowned tasks), which every scope predicate and the listing index use.
 */
const defineTaskTable = (table: PgTableFn<string | undefined>) =>
  table(
    TASKS_TABLE,
    {
      /** Creation order: the keyset that `list` pages by. */
      seq: bigint("seq", { mode: "number" }).generatedAlwaysAsIdentity().notNull(),
      id: text("id").primaryKey(),
      ownerKey: text("owner_key").notNull(),
      ownerPrincipal: text("owner_principal"),
      ownerTenant: text("owner_tenant"),
      ownerAudience: text("owner_audience"),
      era: text("era").notNull(),
      status: text("status").notNull(),
      statusMessage: text("status_message"),
      request: jsonb("request").notNull(),
      /** `request.toolName`, as a column so that a worker can claim only the tools it runs. */
      toolName: text("tool_name").notNull(),
      result: jsonb("result"),
      error: jsonb("error"),
      inputRequests: jsonb("input_requests").notNull().default(sql`'{}'::jsonb`),
      inputResponses: jsonb("input_responses").notNull().default(sql`'{}'::jsonb`),
      answeredInputKeys: jsonb("answered_input_keys").notNull().default(sql`'[]'::jsonb`),
      /** Every answer received, by key, for the task's lifetime (a re-run gets them back). */
      inputAnswers: jsonb("input_answers").notNull().default(sql`'{}'::jsonb`),
      ttlMs: bigint("ttl_ms", { mode: "number" }),
      ttlAnchor: text("ttl_anchor").notNull(),
      pollIntervalMs: bigint("poll_interval_ms", { mode: "number" }),
      createdAt: timestamp("created_at", ms3).notNull(),
      updatedAt: timestamp("updated_at", ms3).notNull(),
      /** Set when a task with a ttl ends; running tasks never expire. */
      expiresAt: timestamp("expires_at", ms3),
      cancelRequestedAt: timestamp("cancel_requested_at", ms3),
      version: integer("version").notNull().default(1),
      // The queue (core's `TaskExecution`). A running task with no holder is queued: any
      // worker may claim it from `available_at` on (NULL: at once).
      /** The run holding the running task (`execution.holder`), and until when. */
      leaseHolder: text("lease_holder"),
      leaseExpiresAt: timestamp("lease_expires_at", ms3),
      /** Grows by one with every claim; the holder's writes carry it (the fence). */
      fencingToken: integer("fencing_token").notNull().default(0),
      /** Runs that counted so far. */
      attempt: integer("attempt").notNull().default(0),
      /** Earliest time a queued task may be claimed (retry backoff). */
      availableAt: timestamp("available_at", ms3),
      // The execution policy, fixed at creation.
      maxAttempts: integer("max_attempts").notNull().default(1),
      backoffMs: integer("backoff_ms").notNull().default(1000),
      retryOnError: boolean("retry_on_error").notNull().default(false),
      deadlineMs: bigint("deadline_ms", { mode: "number" }),
      /**
       * The payload bytes the row holds (arguments, result or error, input answers), kept up
       * to date by every statement that writes a payload, so that the per-owner byte quota is
       * one indexed sum.
       */
      payloadBytes: bigint("payload_bytes", { mode: "number" }).notNull().default(0),
      /**
       * The W3C trace context of the creating request (core's `TaskRecord.traceContext`),
       * checked by the store before it is written: every run of the task continues it.
       */
      traceparent: text("traceparent"),
      tracestate: text("tracestate"),
    },
    (t) => [
      // Owner-scoped listing in creation order: WHERE owner_key = $1 AND seq > $2 ORDER BY seq.
      index("mcp_tasks_owner_seq_idx").on(t.ownerKey, t.seq),
      // The expiry sweep and the expired-row filter: only finished tasks with a ttl have one.
      index("mcp_tasks_expires_idx").on(t.expiresAt).where(sql`${t.expiresAt} IS NOT NULL`),
      // One owner's expired rows, reclaimed when its usage counters say it is full.
      index("mcp_tasks_owner_expires_idx")
        .on(t.ownerKey, t.expiresAt)
        .where(sql`${t.expiresAt} IS NOT NULL`),
      // The queue: each owner's claimable tasks (running, no holder), by tool, in creation
      // order. A claim finds the owners' queues by skipping from one (owner, tool) pair to the
      // next (a loose index scan), then takes the oldest tasks of the pairs of its tools: a
      // backlog of another tool's tasks costs it one probe, not a read of every such task.
      index("mcp_tasks_claim_owner_idx")
        .on(t.ownerKey, t.toolName, t.seq)
        .where(sql`${t.leaseHolder} IS NULL AND ${t.status} IN ('working', 'input_required')`),
      // Each owner's claimed tasks by status, counted by a claim against the per-owner
      // running limit: at most the cluster's workers, whatever the size of the table.
      index("mcp_tasks_running_owner_idx")
        .on(t.ownerKey, t.status)
        .where(sql`${t.leaseHolder} IS NOT NULL AND ${t.status} IN ('working', 'input_required')`),
      // Orphan detection: running tasks whose lease ran out.
      index("mcp_tasks_lease_idx")
        .on(t.leaseExpiresAt)
        .where(
          sql`${t.leaseExpiresAt} IS NOT NULL AND ${t.status} IN ('working', 'input_required')`,
        ),
      check(
        "mcp_tasks_status_check",
        sql`${t.status} IN ('working', 'input_required', 'completed', 'failed', 'cancelled')`,
      ),
      check("mcp_tasks_era_check", sql`${t.era} IN ('2025-11-25', '2026-07-28')`),
      check("mcp_tasks_ttl_anchor_check", sql`${t.ttlAnchor} IN ('creation', 'terminal')`),
    ],
  );

/**
 * The usage counters the quotas are checked against, kept by the same statement as every
 * write that adds or removes a task or changes its payload bytes, so that a quota check reads
 * a fixed number of rows whatever the size of the task table. Each owner's usage (and the
 * table-wide total, under the owner key `*`, which no owner key can be) is spread over 16
 * stripes, each statement writing one drawn at random, so that concurrent writers rarely
 * wait on the same row; a check sums the stripes. The counters count stored rows, expired
 * ones not yet removed included: an upper bound of the live rows (see the store).
 */
const defineUsageTable = (table: PgTableFn<string | undefined>) =>
  table(
    USAGE_TABLE,
    {
      /** core's `ownerKey` (the empty string for unowned tasks), or `*` for the total. */
      ownerKey: text("owner_key").notNull(),
      /** 0 to 15, drawn by each writing statement; only the sum over stripes means anything. */
      stripe: smallint("stripe").notNull(),
      /** Rows stored. */
      tasks: bigint("tasks", { mode: "number" }).notNull().default(0),
      /** Their `payload_bytes` summed (0 in the total's stripes). */
      bytes: bigint("bytes", { mode: "number" }).notNull().default(0),
    },
    (t) => [primaryKey({ name: "mcp_task_usage_pk", columns: [t.ownerKey, t.stripe] })],
  );

/** The Drizzle definition of the usage table in some schema; see {@link taskUsageTable}. */
export type TaskUsageTable = ReturnType<typeof defineUsageTable>;

/** The Drizzle definition of the task table in some schema; see {@link taskTable}. */
export type TaskTable = ReturnType<typeof defineTaskTable>;

/**
 * The task table for your own Drizzle schema, in `schema` (default `public`): a schema name,
 * or your `pgSchema(...)` object. Export it from the file drizzle-kit reads and
 * `drizzle-kit generate` puts the task table in your migrations, the same table as
 * {@link migrate} makes; query it, or join your tables to it, with Drizzle. Give the store
 * the same schema name. drizzle-kit creates a schema only for a `pgSchema` it finds
 * exported, so for a schema other than `public` export that too:
 *
 * ```ts
 * export const jobs = pgSchema("jobs");
 * export const mcpTasks = taskTable(jobs);
 * ```
 */
export function taskTable(schema: string | PgSchema = DEFAULT_SCHEMA): TaskTable {
  return defineTaskTable(tableFn(schema));
}

/**
 * The quota usage counters for your own Drizzle schema, next to {@link taskTable}: export
 * both from the file drizzle-kit reads (the store needs both tables).
 *
 * ```ts
 * export const mcpTasks = taskTable(jobs);
 * export const mcpTaskUsage = taskUsageTable(jobs);
 * ```
 */
export function taskUsageTable(schema: string | PgSchema = DEFAULT_SCHEMA): TaskUsageTable {
  return defineUsageTable(tableFn(schema));
}

function tableFn(schema: string | PgSchema): PgTableFn<string | undefined> {
  if (typeof schema !== "string") {
    checkSchemaName(schema.schemaName);
    return schema.table as PgTableFn<string | undefined>;
  }
  const name = checkSchemaName(schema);
  return name === DEFAULT_SCHEMA
    ? (pgTable as PgTableFn<string | undefined>)
    : (pgSchema(name).table as PgTableFn<string | undefined>);
}

/** The task table in the `public` schema (`taskTable()`). */
export const tasks: TaskTable = taskTable();

/** The usage counters in the `public` schema (`taskUsageTable()`). */
export const taskUsage: TaskUsageTable = taskUsageTable();

/** A row as Drizzle types it, for apps that query the table with Drizzle themselves. */
export type TaskRow = TaskTable["$inferSelect"];
