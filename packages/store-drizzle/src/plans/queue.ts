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

/** Most owners with queued work one claim looks at (in owner key order beyond it). */
const MAX_CLAIM_OWNERS = 1000;

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
}

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
] as const satisfies readonly (keyof ClaimInput)[];

/** The queue: claims, leases, and the runs that give a task back (lost runs: `orphans.ts`). */
export function queuePlans(ctx: PlanContext, note: Notes) {
  const T = ctx.table;
  // The store runs it in a transaction right after taking the claim lock (an advisory lock)
  // when an owner limit applies, so claims on every node run one at a time and each sees the
  // ones before it: the running counts are exact and two nodes cannot together take an owner
  // past its limit. Fair across owners: the owners with queued work, found by skipping from
  // one owner key to the next on the claim-owner index (a loose index scan: one index probe
  // per owner, whatever the backlog), at most MAX_CLAIM_OWNERS of them; each owner's running
  // count (core's `countedRunning`); the oldest claimable rows of each owner under its limit,
  // up to its room; then the rows in turn, the owner with the fewest running tasks first (the
  // rows this claim takes included) and ties to the older row. The picked rows are updated
  // through the primary key: the re-check that nobody took or ended a row meanwhile is worded
  // so that it does not match the claim-owner index's predicate (holders are never empty), or
  // the planner, misled by stale statistics, walks that whole index instead. Each gets the
  // next run: attempt and fencing token + 1, the holder and a lease. A row changed meanwhile
  // by another writer (cancelled, deleted) is re-checked by the UPDATE and skipped. The
  // picked rows are locked as they are picked, skipping rows another transaction holds:
  // without an owner limit the store sends the claim without the claim lock, and claims
  // running side by side then take disjoint rows and never wait for each other's row locks.
  const claimText = (p: Placeholders<ClaimInput>, tools: boolean) => `WITH RECURSIVE o(k) AS (
  (SELECT x.owner_key FROM ${T} AS x WHERE x.lease_holder IS NULL AND x.status IN ${ACTIVE}
    ORDER BY x.owner_key LIMIT 1)
  UNION ALL
  SELECT (SELECT x.owner_key FROM ${T} AS x WHERE x.lease_holder IS NULL AND x.status IN ${ACTIVE}
    AND x.owner_key > o.k ORDER BY x.owner_key LIMIT 1) FROM o WHERE o.k IS NOT NULL
), owners AS (
  SELECT w.k, w.running FROM (
    SELECT o.k, ${runningOf(T, "o.k", `${p.maxRunningPerOwner}::bigint`, `${p.maxWaitingPerOwner}::bigint`)} AS running
    FROM (SELECT o.k FROM o WHERE o.k IS NOT NULL LIMIT ${MAX_CLAIM_OWNERS}) AS o
  ) AS w WHERE ${p.maxRunningPerOwner}::bigint IS NULL OR w.running < ${p.maxRunningPerOwner}::bigint
), cand AS (
  SELECT c.id, c.seq, ow.running + row_number() OVER (PARTITION BY ow.k ORDER BY c.seq) AS turn
  FROM owners AS ow CROSS JOIN LATERAL (
    SELECT x.id, x.seq FROM ${T} AS x
    WHERE x.owner_key = ow.k AND x.lease_holder IS NULL AND x.status IN ${ACTIVE}
      AND (x.available_at IS NULL OR x.available_at <= ${nowOf(p.now)})${
        tools
          ? `
      AND x.tool_name = ANY(ARRAY(SELECT jsonb_array_elements_text(${p.tools}::text::jsonb)))`
          : ""
      }
    ORDER BY x.seq LIMIT least(${p.limit}::bigint, ${p.maxRunningPerOwner}::bigint - ow.running)
    FOR UPDATE OF x SKIP LOCKED
  ) AS c
), c AS (
  SELECT cand.id FROM cand ORDER BY cand.turn, cand.seq LIMIT ${p.limit}::bigint
)
UPDATE ${T} AS t SET attempt = t.attempt + 1, fencing_token = t.fencing_token + 1,
    lease_holder = ${p.holder}::text, lease_expires_at = n.now + ${msInterval(p.leaseMs)},
    available_at = NULL, version = t.version + 1
  FROM (SELECT ${nowOf(p.now)} AS now) AS n
  WHERE t.id = ANY(ARRAY(SELECT c.id FROM c))
    AND coalesce(t.lease_holder, '') = '' AND t.status <> ALL(ARRAY['completed', 'failed', 'cancelled'])
  RETURNING t.seq::float8 AS seq, ${cols("t")}${note.kinds("t", "claimed")}`;
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
