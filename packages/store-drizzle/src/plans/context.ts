import type { TaskChangeKind } from "@mcp-tasks/core";

/*
 * What one store's plans are built for (its tables, bounds and notify setting), and the two
 * side effects its writing statements carry: the usage counters they adjust and the
 * notifications they send in the same transaction.
 */

/** How the statements announce changes. */
export interface NotifySettings {
  /** NOTIFY from inside each write statement (same transaction) on this channel, or not. */
  readonly channel: string | null;
  /** This store's id, carried in each notification so the store can skip its own. */
  readonly origin: string;
}

/**
 * Bounds enforced inside the create statement (and, for bytes, the input statement). Each
 * is a whole number written into the statement text, checked by the store beforehand.
 */
export interface Bounds {
  readonly maxTasks: number | null;
  readonly maxTasksPerOwner: number | null;
  /** Most `payload_bytes` summed over one owner's live rows. */
  readonly maxBytesPerOwner: number | null;
}

/** What a store's plans are built for. */
export interface PlanContext {
  /** The task table, schema-qualified. */
  readonly table: string;
  /** The usage counters' table, schema-qualified. */
  readonly usageTable: string;
  readonly notify: NotifySettings;
  readonly bounds: Bounds;
  /**
   * For this long after the database server (re)started no lease counts as run out (see
   * `DrizzleTaskStoreOptions.restartGraceMs`); 0 for none.
   */
  readonly restartGraceMs: number;
}

/**
 * How many stripes each owner's usage (and the total) is spread over. A quota check sums
 * this many rows; concurrent writers rarely wait on the same one.
 */
const USAGE_STRIPES = 16;

/**
 * The stripe a statement writes its usage changes to: one per statement, drawn at random
 * (an uncorrelated subquery, evaluated once), so that a batch of rows costs one counter row
 * per owner and one of the total rather than one per task's stripe (a batch of 7 creates
 * touched ~12 counter rows, which almost always overlapped another batch in flight; two
 * statements now share a stripe 1 time in 16). A stripe's value means nothing alone (it
 * may be negative): only an owner's sum over its stripes counts.
 */
const STATEMENT_STRIPE = `(SELECT floor(random() * ${USAGE_STRIPES})::smallint)`;

/** The owner key of the table-wide total in the usage table (no owner key is `*`). */
export const TOTAL_KEY = "*";

/**
 * A CTE body that adds to the usage counters: `changes` selects rows (id, k owner key, dt
 * tasks added, db bytes added), one per written task. Each task's change goes to its owner's
 * counter, and its count also to the total's, on the statement's stripe; the rows are summed
 * per counter and upserted in key order, so that concurrent statements lock counters in the
 * same order (no deadlock), after the task rows (every statement locks those first).
 */
export const bumpUsage = (
  U: string,
  changes: string,
) => `INSERT INTO ${U} AS u (owner_key, stripe, tasks, bytes)
  SELECT c.k, r.s, sum(c.dt), sum(c.db) FROM (
    SELECT ch.k, ch.dt, ch.db FROM (${changes}) AS ch
    UNION ALL
    SELECT '${TOTAL_KEY}', ch.dt, 0 FROM (${changes}) AS ch WHERE ch.dt <> 0
  ) AS c, (SELECT ${STATEMENT_STRIPE} AS s) AS r GROUP BY c.k, r.s ORDER BY c.k
  ON CONFLICT (owner_key, stripe) DO UPDATE SET tasks = u.tasks + excluded.tasks, bytes = u.bytes + excluded.bytes`;

/**
 * The in-transaction notification of a written row, as an extra column of the final SELECT
 * (a SELECT-only CTE that the query does not read would never run); pg_notify returns void:
 * length(''::text) = 0. It may also stand in a RETURNING list, where `a` is the written row.
 * One notification may carry several changes of the row (`kinds`), in order; a kind is a
 * quoted literal or an expression. Where a kind may be `queued`, the payload ends with each
 * change's tool name (null for the others), as after-commit batches do, so that a node that
 * does not run the tool sends no claim for the task. Every piece is empty when the store
 * notifies after commit instead (see `feed.ts`).
 */
export function notes(notify: NotifySettings) {
  const expr = (a: string, kinds: string[]) => {
    const changes = kinds.map((k) => `${k}, ${a}.status, ${a}.version, ${a}.id`).join(", ");
    const tools = kinds.some((k) => k.includes("'queued'"))
      ? `, json_build_array(${kinds
          .map((k) => `CASE WHEN ${k} = 'queued' THEN ${a}.request->>'toolName' END`)
          .join(", ")})`
      : "";
    return `length(pg_notify('${notify.channel}', json_build_array('${notify.origin}', ${changes}${tools})::text)::text)`;
  };
  const of = (a: string, ...kinds: string[]) =>
    notify.channel === null ? "" : `, ${expr(a, kinds)} AS _n`;
  return {
    /** Whether the statements notify at all. */
    enabled: notify.channel !== null,
    /** The bare notification expression. */
    expr,
    /** `, <notification> AS _n` for kinds given as SQL (literals or expressions). */
    of,
    /** `, <notification> AS _n` for constant kinds. */
    kinds: (a: string, ...kinds: TaskChangeKind[]) => of(a, ...kinds.map((k) => `'${k}'`)),
    /** The same column, empty, for a branch that changed nothing. */
    none: notify.channel === null ? "" : ", NULL::integer AS _n",
  };
}

/** The notification pieces of one store (see {@link notes}). */
export type Notes = ReturnType<typeof notes>;
