import { bumpUsage, type Notes, type PlanContext, TOTAL_KEY } from "./context.js";
import { BY_ID, type ById, inScope, live, nowOf } from "./fragments.js";
import { fixed, plan } from "./plan.js";

/** The input of `cleanup`: one batch of expired rows, whoever owns them. */
export interface CleanupInput {
  readonly now: number | null;
  readonly limit: number;
}

/** The input of `reclaimOwner`: {@link CleanupInput} for one owner's rows. */
export interface ReclaimOwnerInput extends CleanupInput {
  readonly ownerKey: string;
}

/**
 * Removing rows (a delete, expired rows) with their usage, in the same statement, and the
 * usage counters themselves (pruning, audits).
 */
export function housekeepingPlans({ table: T, usageTable: U }: PlanContext, note: Notes) {
  /** The removed rows `d` given back to the usage counters, and announced. */
  const removed = `), counted AS (
  ${bumpUsage(U, "SELECT d.id, d.owner_key AS k, -1 AS dt, -d.payload_bytes AS db FROM d")}
) SELECT d.id, d.status, d.version${note.kinds("d", "deleted")} FROM d`;
  return {
    delete: plan<ById>(
      BY_ID,
      (p) => `WITH d AS (
  DELETE FROM ${T} AS t WHERE t.id = ${p.id} AND ${inScope(p)} AND ${live(p)}
  RETURNING t.id, t.owner_key, t.payload_bytes, t.status, t.version
${removed}`,
    ),

    /**
     * SKIP LOCKED: concurrent sweepers take disjoint batches. One statement per batch, the
     * usage counters included: no round trip per row.
     */
    cleanup: plan<CleanupInput>(
      ["now", "limit"],
      (p) => `WITH d AS (
  DELETE FROM ${T} AS t WHERE t.id IN (
    SELECT x.id FROM ${T} AS x WHERE x.expires_at <= ${nowOf(p.now)}
    ORDER BY x.expires_at LIMIT ${p.limit}::bigint FOR UPDATE SKIP LOCKED)
  RETURNING t.id, t.owner_key, t.payload_bytes, t.status, t.version
${removed}`,
    ),

    /**
     * The same for one owner's expired rows, through mcp_tasks_owner_expires_idx: what a
     * create or an answer refused by the owner's counters reclaims before it is refused for
     * good.
     */
    reclaimOwner: plan<ReclaimOwnerInput>(
      ["now", "limit", "ownerKey"],
      (p) => `WITH d AS (
  DELETE FROM ${T} AS t WHERE t.id IN (
    SELECT x.id FROM ${T} AS x WHERE x.owner_key = ${p.ownerKey}::text AND x.expires_at <= ${nowOf(p.now)}
    ORDER BY x.expires_at LIMIT ${p.limit}::bigint FOR UPDATE SKIP LOCKED)
  RETURNING t.id, t.owner_key, t.payload_bytes, t.status, t.version
${removed}`,
    ),

    /**
     * The counter rows of owners that hold nothing any more (the total's stay). A stripe
     * alone may be anything (see `bumpUsage`), so an owner's rows are removed together, and
     * only those this statement could lock, when they sum to zero in both counts: removing
     * them then changes no owner's sum, whatever is written meanwhile (SKIP LOCKED leaves a
     * row being written alone, and a row inserted meanwhile is not among them).
     */
    pruneUsage: fixed(`WITH c AS (
  SELECT x.owner_key FROM ${U} AS x WHERE x.owner_key <> '${TOTAL_KEY}'
  GROUP BY x.owner_key HAVING sum(x.tasks) = 0 AND sum(x.bytes) = 0
), l AS (
  SELECT x.owner_key, x.stripe, x.tasks, x.bytes FROM ${U} AS x
  WHERE x.owner_key IN (SELECT c.owner_key FROM c) FOR UPDATE SKIP LOCKED
), z AS (
  SELECT l.owner_key FROM l GROUP BY l.owner_key HAVING sum(l.tasks) = 0 AND sum(l.bytes) = 0
) DELETE FROM ${U} AS u USING l
  WHERE u.owner_key = l.owner_key AND u.stripe = l.stripe
    AND l.owner_key IN (SELECT z.owner_key FROM z)`),

    /** What the counters say (tests, audits). */
    usageCounters:
      fixed(`SELECT u.owner_key, sum(u.tasks)::float8 AS tasks, sum(u.bytes)::float8 AS bytes
  FROM ${U} AS u GROUP BY u.owner_key`),

    /** The same counted from the task table (tests, audits): a full scan. */
    usageRecount:
      fixed(`SELECT t.owner_key, count(*)::float8 AS tasks, sum(t.payload_bytes)::float8 AS bytes
  FROM ${T} AS t GROUP BY t.owner_key`),
  };
}
