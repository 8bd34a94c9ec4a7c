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
     * Counters of owners that hold nothing any more (the total's stay). A counter row is
     * only zero when no stored task maps to it, so removing one loses nothing; SKIP LOCKED: a
     * counter being written is left alone (and is then not zero, or is pruned next time).
     */
    pruneUsage: fixed(`DELETE FROM ${U} AS u WHERE (u.owner_key, u.stripe) IN (
  SELECT x.owner_key, x.stripe FROM ${U} AS x
  WHERE x.tasks = 0 AND x.bytes = 0 AND x.owner_key <> '${TOTAL_KEY}'
  FOR UPDATE SKIP LOCKED)`),

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
