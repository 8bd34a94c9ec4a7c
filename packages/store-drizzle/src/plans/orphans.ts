import {
  CANCELLED_WITHOUT_RUN_MESSAGE,
  payloadBytes,
  retryingMessage,
  WORKER_LOST_ERROR,
  WORKER_LOST_REASON,
} from "@mcp-tasks/core/store";
import { bumpUsage, type Notes, type PlanContext } from "./context.js";
import { ACTIVE, BACKOFF, CANCEL_REQUESTED, cols, msInterval, nowOf } from "./fragments.js";
import { plan, type Statement } from "./plan.js";
import { endedOrRequeuedSets } from "./terminal-effects.js";

/** The input of `recoverOrphans`: one batch. */
export interface RecoverOrphansInput {
  readonly now: number | null;
  /** Most orphans in this batch. */
  readonly limit: number;
}

/** The parameters of `recoverOrphans`: core's wording and error, the same for every batch. */
interface RecoverOrphansParams extends RecoverOrphansInput {
  /** The error an orphan without attempts left fails with (JSON), its message and bytes. */
  readonly error: string;
  readonly errorMessage: string;
  /** The retry message, with {@link RETRY_TEMPLATE}'s placeholders. */
  readonly retryMessage: string;
  readonly errorBytes: number;
  readonly cancelledMessage: string;
}

/**
 * The status message of an orphan put back in the queue: core's `retryingMessage` with
 * placeholder numbers that the statement replaces with the row's, so the wording is core's.
 */
const RETRY_TEMPLATE = (() => {
  const nextAttempt = 987_654_321;
  const maxAttempts = 123_456_789;
  return {
    text: retryingMessage(WORKER_LOST_REASON, nextAttempt, maxAttempts),
    nextAttempt: String(nextAttempt),
    maxAttempts: String(maxAttempts),
  };
})();

/** {@link RecoverOrphansParams}' constant part. */
const ORPHAN_WORDING = {
  error: JSON.stringify(WORKER_LOST_ERROR),
  errorMessage: WORKER_LOST_ERROR.message,
  retryMessage: RETRY_TEMPLATE.text,
  errorBytes: payloadBytes(WORKER_LOST_ERROR),
  cancelledMessage: CANCELLED_WITHOUT_RUN_MESSAGE,
};

/**
 * Running tasks whose lease ran out, oldest deadline first, SKIP LOCKED so that concurrent
 * sweepers take disjoint rows. As core's `recoverOrphan`: `cancelled` when a cancellation
 * was requested; else back to the queue after the backoff while attempts remain; otherwise
 * failed "Worker lost" (its error's bytes counted). Returns each recovered row whole, as
 * written, so the store hands the ended ones back as task records.
 */
export function orphanPlans(ctx: PlanContext, note: Notes) {
  const { table: T, usageTable: U, restartGraceMs } = ctx;
  const retry = RETRY_TEMPLATE;
  const cancelled = CANCEL_REQUESTED;
  const retrying = `(NOT ${cancelled} AND t.attempt < t.max_attempts)`;
  const failing = `(NOT ${cancelled} AND t.attempt >= t.max_attempts)`;
  // The server's own clock and start time: while it was away no holder could renew, so right
  // after it is back nothing is taken from a holder that is renewing again.
  const afterRestartGrace =
    restartGraceMs > 0
      ? `
    AND now() >= pg_postmaster_start_time() + ${msInterval(String(restartGraceMs))}`
      : "";
  const recoverOrphans = plan<RecoverOrphansParams>(
    ["now", "limit", "error", "errorMessage", "retryMessage", "errorBytes", "cancelledMessage"],
    (p) => `WITH o AS (
  SELECT x.id FROM ${T} AS x
  WHERE x.status IN ${ACTIVE} AND x.lease_holder IS NOT NULL
    AND x.lease_expires_at IS NOT NULL AND x.lease_expires_at <= ${nowOf(p.now)}${afterRestartGrace}
  ORDER BY x.lease_expires_at LIMIT ${p.limit}::bigint FOR UPDATE SKIP LOCKED
), u AS (
  UPDATE ${T} AS t SET
    status = CASE WHEN ${cancelled} THEN 'cancelled' WHEN ${retrying} THEN 'working' ELSE 'failed' END,
    error = CASE WHEN ${failing} THEN ${p.error}::text::jsonb ELSE t.error END,
    payload_bytes = CASE WHEN ${failing} THEN t.payload_bytes + ${p.errorBytes}::bigint ELSE t.payload_bytes END,
    status_message = CASE WHEN ${cancelled} THEN ${p.cancelledMessage}::text WHEN ${retrying} THEN replace(replace(${p.retryMessage}::text, '${retry.nextAttempt}', (t.attempt + 1)::text), '${retry.maxAttempts}', t.max_attempts::text) ELSE ${p.errorMessage}::text END,
    ${endedOrRequeuedSets(`NOT ${retrying}`, BACKOFF)},
    input_responses = CASE WHEN ${retrying} THEN '{}'::jsonb ELSE t.input_responses END,
    updated_at = n.now, version = t.version + 1
  FROM o, (SELECT ${nowOf(p.now)} AS now) AS n
  WHERE t.id = o.id AND t.status IN ${ACTIVE} AND t.lease_holder IS NOT NULL
  RETURNING ${cols("t")}, t.owner_key AS usage_key
), counted AS (
  -- Only a failed orphan adds bytes (its error's). Counted from the row as written, not as a
  -- difference with the statement's snapshot: an answer committed between the snapshot and
  -- the row lock would otherwise be counted a second time.
  ${bumpUsage(
    U,
    `SELECT u.id, u.usage_key AS k, 0 AS dt, ${p.errorBytes}::bigint AS db
    FROM u WHERE u.status = 'failed'`,
  )}
) SELECT u.*${note.of("u", "CASE WHEN u.status = 'working' THEN 'queued' ELSE 'status_changed' END")} FROM u`,
  );
  return {
    recoverOrphans: (input: RecoverOrphansInput): Statement =>
      recoverOrphans({ ...input, ...ORPHAN_WORDING }),
  };
}
