import type { TaskChangeKind } from "@mcp-tasks/core";
import { bumpUsage, type Notes, type PlanContext } from "./context.js";
import {
  ACTIVE,
  BY_ID,
  type ById,
  cols,
  FENCED,
  type Fenced,
  fenceHolds,
  inScope,
  live,
  nowOf,
} from "./fragments.js";
import { type Placeholders, plan } from "./plan.js";

/** The input of `requireInput`. */
export interface RequireInputInput extends Fenced {
  /** The new input requests, a JSON object by key. */
  readonly requests: string;
  /** Whether to set the status message (to `message`, null included). */
  readonly setMessage: boolean;
  readonly message: string | null;
}

/** The input of `setStatusMessage`. */
export interface SetStatusMessageInput extends Fenced {
  readonly message: string | null;
}

/** The input of `submitInput`. */
export interface SubmitInputInput extends ById {
  /** The responses, a JSON object by key. */
  readonly responses: string;
  /** Their keys in the caller's order, a JSON array. */
  readonly keys: string;
  /** Each answer's payload bytes by key, a JSON object. */
  readonly sizes: string;
}

/**
 * The writes of a task that stays active: input requests and answers, the status message,
 * cancellation requests. The terminal ones are in `settle.ts`, the queue's in `queue.ts`.
 */
export function transitionPlans({ table: T, usageTable: U, bounds }: PlanContext, note: Notes) {
  /** A fenced write of a running task (see `fenceHolds`). */
  const update = <I extends Fenced>(
    p: Placeholders<I>,
    set: string,
    kind: TaskChangeKind,
    extraWhere = "",
  ) => `UPDATE ${T} AS t
  SET ${set}, updated_at = n.now, version = t.version + 1
  FROM (SELECT ${nowOf(p.now)} AS now) AS n
  WHERE t.id = ${p.id} AND ${inScope(p)} AND t.status IN ${ACTIVE} AND ${fenceHolds(p)}${extraWhere}
  RETURNING ${cols("t")}${note.kinds("t", kind)}`;

  /** Idempotent: when nothing changes, the same statement returns the task as it is. */
  const orCurrent = (p: Placeholders<ById>, extraCols: string) =>
    `SELECT false AS changed${extraCols}, ${cols("t")}${note.none} FROM ${T} AS t
  WHERE t.id = ${p.id} AND ${inScope(p)} AND ${live(p)} AND NOT EXISTS (SELECT 1 FROM u)`;

  // Past maxBytesPerOwner an answer writes nothing (the store reclaims and tries again).
  const answerRoom =
    bounds.maxBytesPerOwner === null
      ? "true"
      : `ans.added = 0 OR (SELECT coalesce(sum(x.bytes), 0) FROM ${U} AS x
      WHERE x.owner_key = ans.owner_key) + ans.added <= ${bounds.maxBytesPerOwner}`;

  return {
    /**
     * Fenced. Keys must be new to the whole ledger: outstanding, received and answered keys
     * are all refused.
     */
    requireInput: plan<RequireInputInput>([...FENCED, "requests", "setMessage", "message"], (p) =>
      update(
        p,
        `status = 'input_required', input_requests = t.input_requests || ${p.requests}::text::jsonb,
    status_message = CASE WHEN ${p.setMessage}::boolean THEN ${p.message}::text ELSE t.status_message END`,
        "input_requested",
        ` AND NOT jsonb_exists_any(t.input_requests, ARRAY(SELECT jsonb_object_keys(${p.requests}::text::jsonb)))
    AND NOT jsonb_exists_any(t.input_responses, ARRAY(SELECT jsonb_object_keys(${p.requests}::text::jsonb)))
    AND NOT jsonb_exists_any(t.answered_input_keys, ARRAY(SELECT jsonb_object_keys(${p.requests}::text::jsonb)))`,
      ),
    ),

    /** Fenced. */
    setStatusMessage: plan<SetStatusMessageInput>([...FENCED, "message"], (p) =>
      update(p, `status_message = ${p.message}::text`, "status_message"),
    ),

    /** Idempotent: a second request returns the task as it is (`changed` false). */
    requestCancel: plan<ById>(
      BY_ID,
      (p) => `WITH u AS (
  UPDATE ${T} AS t SET cancel_requested_at = n.now, updated_at = n.now, version = t.version + 1
  FROM (SELECT ${nowOf(p.now)} AS now) AS n
  WHERE t.id = ${p.id} AND ${inScope(p)} AND t.status IN ${ACTIVE} AND t.cancel_requested_at IS NULL
  RETURNING ${cols("t")}
) SELECT true AS changed, u.*${note.kinds("u", "cancel_requested")} FROM u
UNION ALL ${orCurrent(p, "")}`,
    ),

    /**
     * The row is locked first, so the accepted keys are computed from the version being
     * updated. The answers are also kept for the task's lifetime (input_answers) and their
     * bytes count against the task's owner (its usage counters, updated in the same
     * statement): past maxBytesPerOwner nothing is written and the row says over_quota.
     */
    submitInput: plan<SubmitInputInput>(
      [...BY_ID, "responses", "keys", "sizes"],
      (p) => `WITH cur AS (
  SELECT t.id, t.owner_key, t.input_requests FROM ${T} AS t
  WHERE t.id = ${p.id} AND ${inScope(p)} AND t.status IN ${ACTIVE} FOR UPDATE
), acc AS (
  SELECT cur.id,
    coalesce((SELECT jsonb_agg(e.k ORDER BY e.o)
      FROM jsonb_array_elements_text(${p.keys}::text::jsonb) WITH ORDINALITY AS e(k, o)
      WHERE jsonb_exists(cur.input_requests, e.k)), '[]'::jsonb) AS keys,
    cur.input_requests - ARRAY(SELECT jsonb_array_elements_text(${p.keys}::text::jsonb)) AS pending
  FROM cur
), ans AS (
  SELECT acc.*, cur.owner_key, (SELECT jsonb_object_agg(k.value, ${p.responses}::text::jsonb -> k.value)
    FROM jsonb_array_elements_text(acc.keys) AS k) AS answers,
    (SELECT coalesce(sum((${p.sizes}::text::jsonb ->> k.value)::bigint), 0)
      FROM jsonb_array_elements_text(acc.keys) AS k) AS added
  FROM acc JOIN cur ON cur.id = acc.id
), fit AS (
  SELECT ans.*, (${answerRoom}) AS room FROM ans
), u AS (
  UPDATE ${T} AS t SET
    status = CASE WHEN ans.pending = '{}'::jsonb THEN 'working' ELSE t.status END,
    input_requests = ans.pending,
    input_responses = t.input_responses || ans.answers,
    input_answers = t.input_answers || ans.answers,
    answered_input_keys = t.answered_input_keys || ans.keys,
    payload_bytes = t.payload_bytes + ans.added,
    updated_at = n.now, version = t.version + 1
  FROM fit AS ans, (SELECT ${nowOf(p.now)} AS now) AS n
  WHERE t.id = ans.id AND jsonb_array_length(ans.keys) > 0 AND ans.room
  RETURNING ans.keys AS accepted, false AS over_quota, ${cols("t")}
), counted AS (
  ${bumpUsage(U, "SELECT u.id, f.owner_key AS k, 0 AS dt, f.added AS db FROM u JOIN fit AS f ON f.id = u.id WHERE f.added <> 0")}
) SELECT true AS changed, u.*${note.kinds("u", "input_submitted")} FROM u
UNION ALL ${orCurrent(
        p,
        `, '[]'::jsonb AS accepted,
    coalesce((SELECT NOT f.room FROM fit AS f WHERE jsonb_array_length(f.keys) > 0), false) AS over_quota`,
      )}`,
    ),

    /**
     * Fenced. Draining is the worker's bookkeeping: the version moves, lastUpdatedAt does
     * not. When nothing is drained the task comes back as it is, and the store checks the
     * fence.
     */
    takeInput: plan<Fenced>(
      FENCED,
      (p) => `WITH cur AS (
  SELECT t.id, t.input_responses FROM ${T} AS t
  WHERE t.id = ${p.id} AND ${inScope(p)} AND ${live(p)} AND ${fenceHolds(p)} FOR UPDATE
), u AS (
  UPDATE ${T} AS t SET input_responses = '{}'::jsonb, version = t.version + 1
  FROM cur WHERE t.id = cur.id AND cur.input_responses <> '{}'::jsonb
  RETURNING cur.input_responses AS taken, ${cols("t")}
) SELECT true AS changed, u.*${note.kinds("u", "input_taken")} FROM u
UNION ALL ${orCurrent(p, ", '{}'::jsonb AS taken")}`,
    ),
  };
}
