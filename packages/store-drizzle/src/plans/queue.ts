import { CANCELLED_WITHOUT_RUN_MESSAGE, HANDED_BACK_MESSAGE } from "@mcp-tasks/core/store";
import type { Notes, PlanContext } from "./context.js";
import {
  ACTIVE,
  BACKOFF,
  CANCEL_REQUESTED,
  cols,
  FENCED,
  type Fenced,
  fenceHolds,
  inScope,
  msInterval,
  nowOf,
  runningOf,
} from "./fragments.js";
import { type Placeholders, plan, type Statement } from "./plan.js";
import { endedOrRequeuedSets } from "./terminal-effects.js";

/**
 * Most queues (an owner's queued tasks of one tool) one claim looks at, in (owner key, tool
 * name) order from where the store's previous claim stopped, round the end to the start:
 * the queues beyond it are looked at by the next claims.
 */
export const MAX_CLAIM_QUEUES = 1000;

/** The input of `claim`. */
export interface ClaimInput {
  readonly holder: string;
  readonly leaseMs: number;
  readonly now: number | null;
  /** Most tasks to claim. */
  readonly limit: number;
  /** Core's owner limits (null: none). */
  readonly maxRunningPerOwner: number | null;
  readonly maxWaitingPerOwner: number | null;
  /** Tool names to claim (a JSON array), or null for any. */
  readonly tools: string | null;
  /**
   * The queue (owner key, tool name) where this store's previous claim stopped looking, or
   * null: this claim looks at the queues after it first (see {@link MAX_CLAIM_QUEUES}).
   */
  readonly afterOwnerKey: string | null;
  readonly afterToolName: string | null;
}

/**
 * The columns a claim's rows carry besides the claimed task's: the queue where its walk
 * stopped (null when no queue holds queued work). When it claims nothing, its one row has
 * only these.
 */
export const CLAIM_STOPPED_AT = { ownerKey: "stopped_owner_key", toolName: "stopped_tool_name" };

/** The input of `renewLease`. */
export interface RenewLeaseInput extends Fenced {
  readonly leaseMs: number;
}

/** The input of `requeue`. */
export interface RequeueInput extends Fenced {
  readonly message: string | null;
}

/** The parameters of `releaseLease` and `requeue`. */
interface RequeueParams extends RequeueInput {
  /** The message of a task whose cancellation was requested (it ends instead). */
  readonly cancelledMessage: string;
}

const CLAIM = [
  "holder",
  "leaseMs",
  "now",
  "limit",
  "maxRunningPerOwner",
  "maxWaitingPerOwner",
  "afterOwnerKey",
  "afterToolName",
] as const satisfies readonly (keyof ClaimInput)[];

/** The queue: claims, leases, and the runs that give a task back (lost runs: `orphans.ts`). */
export function queuePlans(ctx: PlanContext, note: Notes) {
  const T = ctx.table;
  // The store runs it in a transaction right after taking the claim lock (an advisory lock)
  // when an owner limit applies, so claims on every node run one at a time and each sees the
  // ones before it: the running counts are exact and two nodes cannot together take an owner
  // past its limit. Fair across owners: the queues with queued work (an owner's tasks of one
  // tool), found by skipping from one (owner key, tool name) pair to the next on the
  // claim-owner index (a loose index scan: one index probe per queue, whatever its length),
  // at most MAX_CLAIM_QUEUES of them from where this store's previous claim stopped (round
  // the end to the start: from the first every time, the queues beyond the bound waited for
  // good behind queues no claim could take from), those of the tools this node runs kept;
  // each of their owners' running count (core's `countedRunning`, counted once per owner:
  // `OFFSET 0` keeps the planner from copying the count into each place that reads it, the
  // owner filter, the queue's limit and every picked row); the oldest claimable rows
  // of each queue, up to its owner's room, and of those each owner's oldest up to its room;
  // then the rows in turn, the owner with the fewest running tasks first (the rows this claim
  // takes included) and ties to the older row. A backlog of a tool this node does not run
  // costs one probe: read row by row in the owner's creation order, 50,000 such tasks made an
  // empty claim 12.6 ms (0.34 ms without them), inside the claim lock. The picked rows are
  // updated through the primary key: the re-check that nobody took or ended a row meanwhile
  // is worded so that it does not match the claim-owner index's predicate (holders are never
  // empty), or the planner, misled by stale statistics, walks that whole index instead. Each
  // gets the next run: attempt and fencing token + 1, the holder and a lease. A row changed
  // meanwhile by another writer (cancelled, deleted) is re-checked by the UPDATE and skipped.
  // The picked rows are locked as they are picked, skipping rows another transaction holds:
  // without an owner limit the store sends the claim without the claim lock, and claims
  // running side by side then take disjoint rows and never wait for each other's row locks.
  // Besides the claimed rows, it returns where its walk stopped (one row of only that when it
  // took none).
  const claimText = (p: Placeholders<ClaimInput>, tools: boolean) => {
    const queued = `x.lease_holder IS NULL AND x.status IN ${ACTIVE}`;
    const pair = "(x.owner_key, x.tool_name)";
    const after = `(${p.afterOwnerKey}::text, ${p.afterToolName}::text)`;
    // Up to and including the previous claim's last queue (no bound without one): round the
    // end, the walk goes on from the first queue to there.
    const upToStart = (queue: string) =>
      `(${p.afterOwnerKey}::text IS NULL OR ${queue} <= ${after})`;
    // The walk: the queue after the previous claim's last one (`w` false), or, when there is
    // none after it, the first (`w` true: wrapped round); then each next one, wrapping round
    // once, and stopping at the previous claim's last queue.
    const next = (from: string) => `SELECT x.owner_key AS k, x.tool_name AS tn FROM ${T} AS x
      WHERE ${queued} AND ${pair} > ${from} ORDER BY x.owner_key, x.tool_name LIMIT 1`;
    const first = `SELECT x.owner_key AS k, x.tool_name AS tn FROM ${T} AS x
      WHERE ${queued} AND ${upToStart(pair)} ORDER BY x.owner_key, x.tool_name LIMIT 1`;
    return `WITH RECURSIVE q(k, tn, w, n) AS (
  (SELECT s.k, s.tn, s.w, 1 FROM (
    (SELECT a.k, a.tn, false AS w FROM (${next(after)}) AS a)
    UNION ALL
    (SELECT a.k, a.tn, true AS w FROM (${first}) AS a)
  ) AS s LIMIT 1)
  UNION ALL
  SELECT s.k, s.tn, s.w, q.n + 1 FROM q CROSS JOIN LATERAL (
    (SELECT a.k, a.tn, q.w AS w FROM (${next("(q.k, q.tn)")}) AS a
      WHERE NOT q.w OR ${upToStart("(a.k, a.tn)")})
    UNION ALL
    (SELECT a.k, a.tn, true AS w FROM (${first}) AS a WHERE NOT q.w)
    LIMIT 1
  ) AS s
), scanned AS (
  SELECT q.k, q.tn, q.n FROM q LIMIT ${MAX_CLAIM_QUEUES}
), queues AS (
  SELECT s.k, s.tn FROM scanned AS s${
    tools
      ? `
  WHERE s.tn = ANY(ARRAY(SELECT jsonb_array_elements_text(${p.tools}::text::jsonb)))`
      : ""
  }
), owners AS (
  SELECT w.k, w.running FROM (
    SELECT o.k, ${runningOf(T, "o.k", `${p.maxRunningPerOwner}::bigint`, `${p.maxWaitingPerOwner}::bigint`)} AS running
    FROM (SELECT DISTINCT queues.k FROM queues) AS o OFFSET 0
  ) AS w WHERE ${p.maxRunningPerOwner}::bigint IS NULL OR w.running < ${p.maxRunningPerOwner}::bigint
), picked AS (
  SELECT ow.k, ow.running, c.id, c.seq
  FROM owners AS ow JOIN queues ON queues.k = ow.k CROSS JOIN LATERAL (
    SELECT x.id, x.seq FROM ${T} AS x
    WHERE x.owner_key = ow.k AND x.tool_name = queues.tn AND x.lease_holder IS NULL
      AND x.status IN ${ACTIVE} AND (x.available_at IS NULL OR x.available_at <= ${nowOf(p.now)})
    ORDER BY x.seq LIMIT least(${p.limit}::bigint, ${p.maxRunningPerOwner}::bigint - ow.running)
    FOR UPDATE OF x SKIP LOCKED
  ) AS c
), cand AS (
  SELECT picked.id, picked.seq, picked.running + row_number() OVER (PARTITION BY picked.k ORDER BY picked.seq) AS turn
  FROM picked
), c AS (
  SELECT cand.id FROM cand
  WHERE ${p.maxRunningPerOwner}::bigint IS NULL OR cand.turn <= ${p.maxRunningPerOwner}::bigint
  ORDER BY cand.turn, cand.seq LIMIT ${p.limit}::bigint
), claimed AS (
  UPDATE ${T} AS t SET attempt = t.attempt + 1, fencing_token = t.fencing_token + 1,
    lease_holder = ${p.holder}::text, lease_expires_at = n.now + ${msInterval(p.leaseMs)},
    available_at = NULL, version = t.version + 1
  FROM (SELECT ${nowOf(p.now)} AS now) AS n
  WHERE t.id = ANY(ARRAY(SELECT c.id FROM c))
    AND coalesce(t.lease_holder, '') = '' AND t.status <> ALL(ARRAY['completed', 'failed', 'cancelled'])
  RETURNING t.seq::float8 AS seq, ${cols("t")}${note.kinds("t", "claimed")}
), stopped AS (
  SELECT s.k, s.tn FROM scanned AS s ORDER BY s.n DESC LIMIT 1
)
SELECT claimed.*, stopped.k AS ${CLAIM_STOPPED_AT.ownerKey}, stopped.tn AS ${CLAIM_STOPPED_AT.toolName}
  FROM stopped LEFT JOIN claimed ON true`;
  };
  const claimAny = plan<ClaimInput>(CLAIM, (p) => claimText(p, false));
  const claimTools = plan<ClaimInput>([...CLAIM, "tools"], (p) => claimText(p, true));

  // Back to the queue (core's `requeueTask`): the task stays running (`working`), no run
  // holds it, the questions of the abandoned run are dropped (their answers stay). A task
  // whose cancellation was requested is not queued again: it ends `cancelled` (core's
  // `endCancelRequested`) with the message `cancelledMessage`, keeping its attempt count and
  // untaken responses like any terminal write.
  const toQueueOrCancelled = (
    p: Placeholders<RequeueParams>,
    q: { readonly availableAt: string; readonly attempt: string },
  ) => `status = CASE WHEN ${CANCEL_REQUESTED} THEN 'cancelled' ELSE 'working' END,
    status_message = CASE WHEN ${CANCEL_REQUESTED} THEN ${p.cancelledMessage}::text ELSE ${p.message}::text END,
    ${endedOrRequeuedSets(CANCEL_REQUESTED, q.availableAt)},
    input_responses = CASE WHEN ${CANCEL_REQUESTED} THEN t.input_responses ELSE '{}'::jsonb END,
    attempt = CASE WHEN ${CANCEL_REQUESTED} THEN t.attempt ELSE ${q.attempt} END`;
  const queuedOrEnded = note.of(
    "t",
    "CASE WHEN t.status = 'cancelled' THEN 'status_changed' ELSE 'queued' END",
  );
  const REQUEUE = [...FENCED, "message", "cancelledMessage"] as const;
  const releaseLease = plan<RequeueParams>(
    REQUEUE,
    (p) => `UPDATE ${T} AS t SET ${toQueueOrCancelled(p, {
      availableAt: "NULL",
      attempt: "greatest(t.attempt - 1, 0)",
    })},
    updated_at = n.now, version = t.version + 1
  FROM (SELECT ${nowOf(p.now)} AS now) AS n
  WHERE t.id = ${p.id} AND ${inScope(p)} AND t.status IN ${ACTIVE} AND ${fenceHolds(p)} AND t.lease_holder IS NOT NULL
  RETURNING t.id, t.status, t.version${queuedOrEnded}`,
  );
  const requeue = plan<RequeueParams>(
    REQUEUE,
    (
      p,
    ) => `UPDATE ${T} AS t SET ${toQueueOrCancelled(p, { availableAt: BACKOFF, attempt: "t.attempt" })},
    updated_at = n.now, version = t.version + 1
  FROM (SELECT ${nowOf(p.now)} AS now) AS n
  WHERE t.id = ${p.id} AND ${inScope(p)} AND t.status IN ${ACTIVE} AND ${fenceHolds(p)}
  RETURNING ${cols("t")}${queuedOrEnded}`,
  );

  return {
    claim: (input: ClaimInput): Statement =>
      input.tools === null ? claimAny(input) : claimTools(input),

    /** Fenced. Bookkeeping: no version bump, no event. */
    renewLease: plan<RenewLeaseInput>(
      [...FENCED, "leaseMs"],
      (p) => `UPDATE ${T} AS t SET lease_expires_at = n.now + ${msInterval(p.leaseMs)}
  FROM (SELECT ${nowOf(p.now)} AS now) AS n
  WHERE t.id = ${p.id} AND ${inScope(p)} AND t.status IN ${ACTIVE} AND ${fenceHolds(p)} AND t.lease_holder IS NOT NULL
  RETURNING t.id`,
    ),

    /**
     * Fenced. A stopping worker hands the task back: claimable at once, its attempt not
     * counted; a task whose cancellation was requested ends instead.
     */
    releaseLease: (input: Fenced): Statement =>
      releaseLease({
        ...input,
        message: HANDED_BACK_MESSAGE,
        cancelledMessage: CANCELLED_WITHOUT_RUN_MESSAGE,
      }),

    /**
     * Fenced. The run gives up and asks for another attempt: claimable after the task's
     * backoff, the attempt counted; a task whose cancellation was requested ends instead.
     */
    requeue: (input: RequeueInput): Statement =>
      requeue({ ...input, cancelledMessage: CANCELLED_WITHOUT_RUN_MESSAGE }),
  };
}
