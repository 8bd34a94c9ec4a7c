import {
  type extractTraceContext,
  QUEUE_AHEAD_COUNT_LIMIT,
  QUEUED_OWNER_LIMIT_MESSAGE,
  queuedAheadMessage,
} from "@mcp-tasks/core";
import type { executionPolicy, NewTask, OwnerScope } from "@mcp-tasks/core/store";
import { bumpUsage, type Notes, type PlanContext, TOTAL_KEY } from "./context.js";
import { ACTIVE, literal, ms, msInterval, nowOf, runningOf } from "./fragments.js";
import { plan } from "./plan.js";

/** The input of {@link createPlans}' `create`. */
export interface CreateInput {
  readonly now: number | null;
  /** The new tasks: a JSON array of {@link newTaskJson} members (see {@link createBatchJson}). */
  readonly tasks: string;
}

/** The input of {@link createPlans}' `createRefusal`. */
export interface CreateRefusalInput {
  readonly id: string;
  readonly ownerKey: string;
}

/**
 * One new task as a member of the JSON array `create` reads, less its leading `{"i":n,`
 * (its position in the batch, added by {@link createBatchJson}): `id`, `k` the owner key,
 * `pp` `pt` `pa` the owner's parts, `era`, `m` status message, `r` request, `ttl`, `an` ttl
 * anchor, `pi` poll interval, `tn` tool name, `ma` max attempts, `bo` backoff ms, `re`
 * retry on error, `dl` deadline ms, `b` payload bytes (the arguments'), `tp` `ts` trace
 * context, `h` holder and `l` lease ms (null: created queued), and under owner limits `ol`,
 * `nm` (no status message given), `mr` `mw` the limits. `request` is JSON text already.
 */
export function newTaskJson(
  task: NewTask,
  scope: OwnerScope,
  request: string,
  policy: ReturnType<typeof executionPolicy>,
  bytes: number,
  traceContext: ReturnType<typeof extractTraceContext>,
): string {
  const o = scope.owner;
  const lease = task.lease;
  const str = (value: string | null | undefined) => JSON.stringify(value ?? null);
  const num = (value: number | null | undefined) => JSON.stringify(value ?? null);
  const limits = task.ownerLimits;
  const fair =
    limits === undefined
      ? `"ol":false,"nm":false,"mr":null,"mw":null`
      : `"ol":true,"nm":${task.statusMessage === undefined},"mr":${num(limits.maxRunningPerOwner)},"mw":${num(limits.maxWaitingPerOwner)}`;
  return `${fair},"id":${JSON.stringify(String(task.taskId))},"k":${JSON.stringify(scope.ownerKey)},"pp":${str(o.principalId)},"pt":${str(o.tenantId)},"pa":${str(o.audience)},"era":${str(task.era)},"m":${str(task.statusMessage)},"r":${request},"ttl":${num(task.ttlMs)},"an":${str(task.ttlAnchor)},"pi":${num(task.pollIntervalMs)},"tn":${str(task.request.toolName)},"ma":${policy.maxAttempts},"bo":${policy.backoffMs},"re":${policy.retryOnError},"dl":${num(policy.deadlineMs)},"b":${bytes},"tp":${str(traceContext?.traceparent)},"ts":${str(traceContext?.tracestate)},"h":${str(lease?.holder)},"l":${num(lease?.durationMs)}}`;
}

/**
 * `create`'s `tasks`: each row of `rows` ({@link newTaskJson}) with its position in the
 * batch, which `create` returns with the row; a `null` row is left out (not sent).
 */
export function createBatchJson(rows: readonly (string | null)[]): string {
  const parts: string[] = [];
  rows.forEach((json, i) => {
    if (json !== null) parts.push(`{"i":${i},${json}`);
  });
  return `[${parts.join(",")}]`;
}

/**
 * Creates, many in one statement (the store batches them like the endings; see
 * `create-batching.ts`). Ids are unique in a batch (the store sees to it).
 *
 * The quotas are checked against the usage counters, a fixed number of rows whatever the
 * size of the table: each row of the batch must fit with the rows before it in the batch
 * (running sums in batch order). The counters count stored rows, an upper bound of the live
 * ones, so what they accept fits; a row they refuse is only refused for good once the store
 * has reclaimed the expired rows involved (see `reclaimOwner`, `cleanup`). Concurrent
 * statements may overshoot a bound by up to the rows in flight. It returns only what the
 * caller does not know: the creation time (database clock), the lease deadline and the
 * version; the store builds the record from its own input. Created queued (no holder), a
 * task is announced as created and queued, in one notification. `alone`: whether the row
 * would fit by itself; only such rows count in the running sums of the rows after them, so
 * that one that can never fit does not refuse the others.
 */
export function createPlans({ table: T, usageTable: U, bounds }: PlanContext, note: Notes) {
  const fits = (all: string, own: string, bytes: string) => {
    const c: string[] = [];
    if (bounds.maxTasks !== null) c.push(`v.all_tasks + ${all} <= ${bounds.maxTasks}`);
    if (bounds.maxTasksPerOwner !== null) {
      c.push(`v.own_tasks + ${own} <= ${bounds.maxTasksPerOwner}`);
    }
    if (bounds.maxBytesPerOwner !== null) {
      c.push(`v.own_bytes + ${bytes} <= ${bounds.maxBytesPerOwner}`);
    }
    return c.length === 0 ? "true" : c.join(" AND ");
  };
  const bounded =
    bounds.maxTasks !== null ||
    bounds.maxTasksPerOwner !== null ||
    bounds.maxBytesPerOwner !== null;
  const createNote = !note.enabled
    ? ""
    : `, CASE WHEN t.lease_holder IS NULL THEN ${note.expr("t", ["'created'", "'queued'"])}
      ELSE ${note.expr("t", ["'created'"])} END AS _n`;
  const batchRows = (
    tasks: string,
  ) => `jsonb_to_recordset(${tasks}::text::jsonb) AS v(i integer, id text, k text, pp text,
    pt text, pa text, era text, m text, r jsonb, ttl bigint, an text, pi bigint, tn text,
    ma integer, bo integer, re boolean, dl bigint, b bigint, tp text, ts text, h text, l bigint,
    ol boolean, nm boolean, mr bigint, mw bigint)`;
  // Under owner limits (`ol`, core's `NewTask.ownerLimits` with `mr` and `mw` its limits), a
  // row is claimed at creation only while its owner is under `mr` (counted from the
  // running-owner index, so it costs at most `mr + mw` index entries), and a row created
  // queued without a message (`nm`: none given) says why it waits: core's owner-limit
  // message, or its owner's queued rows ahead of it, counted up to QUEUE_AHEAD_COUNT_LIMIT
  // from the claim-owner index (plus the owner's rows before it in the batch). The store
  // serialises creates that may claim with the claims (see the store), a batch of them per
  // statement, so the count is exact for them.
  const ahead = `(SELECT count(*) FROM (SELECT 1 FROM ${T} AS y WHERE y.owner_key = fw.k
      AND y.lease_holder IS NULL AND y.status IN ${ACTIVE} LIMIT ${QUEUE_AHEAD_COUNT_LIMIT}) AS q)
      + count(*) FILTER (WHERE fw.hh IS NULL) OVER (PARTITION BY fw.k ORDER BY fw.i ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)`;
  const aheadMessage = (n: string) =>
    `CASE WHEN ${n} >= ${QUEUE_AHEAD_COUNT_LIMIT} THEN ${literal(queuedAheadMessage(QUEUE_AHEAD_COUNT_LIMIT))}
        ELSE replace(${literal(queuedAheadMessage(-1))}, '-1', ${n}::text) END`;
  // `running` also counts the owner's rows before it in the batch that would run at once:
  // the store groups such creates into one statement too. The count of the rows ahead is a
  // column of its own (`fa`): inside the message's CASE, PostgreSQL counted them twice.
  const limited = `f00 AS (
  SELECT v.*, CASE WHEN v.ol THEN ${runningOf(T, "v.k", "v.mr", "v.mw")} ELSE 0 END AS stored_running FROM v
), f0 AS (
  SELECT f00.*, f00.stored_running + count(*) FILTER (WHERE f00.h IS NOT NULL AND f00.ol)
    OVER (PARTITION BY f00.k ORDER BY f00.i ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS running
  FROM f00
), f1 AS (
  SELECT f0.*, CASE WHEN f0.h IS NOT NULL AND f0.ol AND f0.mr IS NOT NULL AND f0.running >= f0.mr
    THEN NULL ELSE f0.h END AS hh FROM f0
), fw AS (
  SELECT f1.*, f1.ol AND f1.hh IS NULL AND f1.nm AS says_why,
    f1.mr IS NOT NULL AND f1.running >= f1.mr AS at_limit FROM f1
), fa AS (
  SELECT fw.*, CASE WHEN fw.says_why AND NOT fw.at_limit THEN ${ahead} END AS ahead FROM fw
), f AS (
  SELECT f.*, CASE WHEN NOT f.says_why THEN f.m
    WHEN f.at_limit THEN ${literal(QUEUED_OWNER_LIMIT_MESSAGE)}
    ELSE ${aheadMessage("f.ahead")} END AS mm FROM fa AS f
)`;
  // The counters of the batch's owners by `= ANY (ARRAY(…))`: an index lookup per owner,
  // whatever the planner knows of the table (with `IN (SELECT …)`, on a table without
  // statistics it read every owner's counters). The total in a subquery of its own, read
  // once (a scalar subquery was read once per reference).
  const checked = (tasks: string) =>
    bounded
      ? `WITH b AS (SELECT * FROM ${batchRows(tasks)}), a AS (
  SELECT v.*, (${fits("1", "1", "v.b")}) AS alone FROM (
    SELECT b.*, t.all_tasks, coalesce(o.tasks, 0) AS own_tasks, coalesce(o.bytes, 0) AS own_bytes
    FROM b CROSS JOIN (SELECT coalesce(sum(x.tasks), 0) AS all_tasks FROM ${U} AS x
      WHERE x.owner_key = '${TOTAL_KEY}') AS t
    LEFT JOIN (SELECT x.owner_key, sum(x.tasks) AS tasks, sum(x.bytes) AS bytes FROM ${U} AS x
      WHERE x.owner_key = ANY (ARRAY(SELECT DISTINCT b.k FROM b)) GROUP BY x.owner_key) AS o ON o.owner_key = b.k
  ) AS v
), v AS (
  SELECT a.*,
    sum(a.alone::int) OVER (ORDER BY a.i) AS run_all,
    sum(a.alone::int) OVER (PARTITION BY a.k ORDER BY a.i) AS run_own,
    sum(CASE WHEN a.alone THEN a.b ELSE 0 END) OVER (PARTITION BY a.k ORDER BY a.i) AS run_bytes
  FROM a
)`
      : `WITH v AS (SELECT * FROM ${batchRows(tasks)})`;

  return {
    create: plan<CreateInput>(
      ["now", "tasks"],
      (p) => `${checked(p.tasks)}, ${limited}, n AS (SELECT ${nowOf(p.now)} AS now), ins AS (
  INSERT INTO ${T} AS t (id, owner_key, owner_principal, owner_tenant, owner_audience, era, status,
    status_message, request, ttl_ms, ttl_anchor, poll_interval_ms, created_at, updated_at,
    tool_name, max_attempts, backoff_ms, retry_on_error, deadline_ms, payload_bytes,
    traceparent, tracestate, attempt, fencing_token, lease_holder, lease_expires_at)
  SELECT v.id, v.k, v.pp, v.pt, v.pa, v.era, 'working', v.mm, v.r, v.ttl, v.an, v.pi, n.now, n.now,
    v.tn, v.ma, v.bo, v.re, v.dl, v.b, v.tp, v.ts,
    CASE WHEN v.hh IS NULL THEN 0 ELSE 1 END, CASE WHEN v.hh IS NULL THEN 0 ELSE 1 END,
    v.hh, CASE WHEN v.hh IS NULL THEN NULL ELSE n.now + ${msInterval("v.l")} END
  FROM f AS v CROSS JOIN n${bounded ? `\n  WHERE v.alone AND ${fits("v.run_all", "v.run_own", "v.run_bytes")}` : ""}
  ORDER BY v.i
  ON CONFLICT (id) DO NOTHING
  RETURNING t.id, t.owner_key, t.payload_bytes, t.created_at, t.lease_holder, t.lease_expires_at,
    t.status, t.status_message, t.version${createNote}
), counted AS (
  ${bumpUsage(U, "SELECT ins.id, ins.owner_key AS k, 1 AS dt, ins.payload_bytes AS db FROM ins")}
) SELECT v.i, ${ms("ins.created_at")} AS created_at, ${ms("ins.lease_expires_at")} AS lease_expires_at,
  ins.version, ins.lease_holder, ins.status_message FROM ins JOIN v ON v.id = ins.id`,
    ),

    /**
     * Why a create inserted nothing: whether the id is taken, and the counters, which the
     * store compares with its bounds to say which one was hit (after reclaiming expired rows).
     */
    createRefusal: plan<CreateRefusalInput>(
      ["id", "ownerKey"],
      (p) => `SELECT EXISTS (SELECT 1 FROM ${T} WHERE id = ${p.id}) AS taken,
  (SELECT coalesce(sum(x.tasks), 0) FROM ${U} AS x WHERE x.owner_key = '${TOTAL_KEY}')::float8 AS total,
  (SELECT coalesce(sum(x.tasks), 0) FROM ${U} AS x WHERE x.owner_key = ${p.ownerKey})::float8 AS own,
  (SELECT coalesce(sum(x.bytes), 0) FROM ${U} AS x WHERE x.owner_key = ${p.ownerKey})::float8 AS own_bytes`,
    ),
  };
}
