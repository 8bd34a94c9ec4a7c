import {
  QUEUE_AHEAD_COUNT_LIMIT,
  QUEUED_OWNER_LIMIT_MESSAGE,
  queuedAheadMessage,
  type TaskChangeKind,
} from "@mcp-tasks/core";
import { ACTIVE_STATUSES, INTENT_FROM } from "@mcp-tasks/core/store";

/*
 * Every statement the store sends, as text with numbered parameters. Each lifecycle
 * operation is ONE statement: a conditional UPDATE (or INSERT/DELETE) whose WHERE clause
 * holds the owner scope and the statuses the operation may start from, so there is no
 * read-modify-write for a concurrent writer to interleave with, and one round trip.
 *
 * Parameter conventions of the by-id statements: $1 task id, $2 the scope's owner key,
 * $3 whether the scope includes unowned tasks, $4 the injected clock's time in ms or NULL
 * for the database clock. The writes of a run (fenced statements) add $5 the fence's
 * holder, or NULL for an unfenced write, and $6 its fencing token; their own parameters
 * follow from $7. The other by-id statements' own parameters follow from $5.
 */

/**
 * One after-commit batch of notifications: $1 the channel, $2 the payloads (a JSON array of
 * strings), one NOTIFY each. Notifications carry nothing durable, so their commit need not
 * wait for the disk: the transaction-local set_config makes this one statement's commit
 * asynchronous.
 */
export const NOTIFY_BATCH = `SELECT pg_notify($1::text, p)
  FROM (SELECT set_config('synchronous_commit', 'off', true)) AS async_commit,
    jsonb_array_elements_text($2::text::jsonb) AS p`;

/** `now` from the injected clock when given, else the database clock. */
const nowOf = (param: string) => `coalesce(to_timestamp(${param}::float8 / 1000), now())`;

/**
 * Milliseconds since the epoch of a timestamptz column, as a JS number. date_part works in
 * float8 (extract would build a numeric and convert it through text); the columns hold whole
 * milliseconds and the float error is far below one, so round() gives them back exactly.
 */
const ms = (column: string) => `round(date_part('epoch', ${column}) * 1000)`;

/**
 * The statuses the intents apply from, taken from core's table (`INTENT_FROM`) rather than
 * written here again. Every statement below uses this one list, so every intent must start
 * from the same statuses: a core change that widens one intent alone is refused here when
 * the module loads, instead of making the store's writes miss and retry.
 */
const ACTIVE = sqlList(ACTIVE_STATUSES);
for (const [intent, from] of Object.entries(INTENT_FROM)) {
  if (from.length !== ACTIVE_STATUSES.length || from.some((s) => !ACTIVE_STATUSES.includes(s))) {
    throw new Error(
      `store-drizzle applies every intent from ${ACTIVE}; core's INTENT_FROM.${intent} differs`,
    );
  }
}

/** A SQL list of string literals (core's constant names, never user input). */
function sqlList(values: readonly string[]): string {
  return `(${values.map((v) => `'${v.replaceAll("'", "''")}'`).join(", ")})`;
}
const SCOPE = "(t.owner_key = $2 OR ($3::boolean AND t.owner_key = ''))";
const LIVE = `(t.expires_at IS NULL OR t.expires_at > ${nowOf("$4")})`;
/**
 * The fence: a run's write applies only while that run (holder and fencing token) still
 * holds the task, tested in the same statement as the rest of the condition.
 */
const FENCE = "($5::text IS NULL OR (t.lease_holder = $5::text AND t.fencing_token = $6::integer))";
/** `ms` interval of a millisecond count. */
const msInterval = (value: string) => `${value}::float8 * interval '1 millisecond'`;

/** When a task ending at `n.now` may be removed (see core's `expiryOnTerminal`). */
const EXPIRY = `CASE WHEN t.ttl_anchor = 'creation' THEN t.created_at ELSE n.now END + t.ttl_ms::float8 * interval '1 millisecond'`;

/** The columns a task record is read from: its name in the row, and its expression. */
const COLUMNS: readonly (readonly [string, (a: string) => string])[] = [
  ["id", (a) => `${a}.id`],
  ["status", (a) => `${a}.status`],
  ["status_message", (a) => `${a}.status_message`],
  ["created_at", (a) => ms(`${a}.created_at`)],
  ["updated_at", (a) => ms(`${a}.updated_at`)],
  ["ttl_ms", (a) => `${a}.ttl_ms::float8`],
  ["ttl_anchor", (a) => `${a}.ttl_anchor`],
  ["expires_at", (a) => ms(`${a}.expires_at`)],
  ["poll_interval_ms", (a) => `${a}.poll_interval_ms::float8`],
  ["owner_principal", (a) => `${a}.owner_principal`],
  ["owner_tenant", (a) => `${a}.owner_tenant`],
  ["owner_audience", (a) => `${a}.owner_audience`],
  ["era", (a) => `${a}.era`],
  ["request", (a) => `${a}.request`],
  ["result", (a) => `${a}.result`],
  ["error", (a) => `${a}.error`],
  ["input_requests", (a) => `${a}.input_requests`],
  ["input_responses", (a) => `${a}.input_responses`],
  ["answered_input_keys", (a) => `${a}.answered_input_keys`],
  ["input_answers", (a) => `${a}.input_answers`],
  ["cancel_requested_at", (a) => ms(`${a}.cancel_requested_at`)],
  ["max_attempts", (a) => `${a}.max_attempts`],
  ["backoff_ms", (a) => `${a}.backoff_ms`],
  ["retry_on_error", (a) => `${a}.retry_on_error`],
  ["deadline_ms", (a) => `${a}.deadline_ms::float8`],
  ["attempt", (a) => `${a}.attempt`],
  ["lease_holder", (a) => `${a}.lease_holder`],
  ["fencing_token", (a) => `${a}.fencing_token`],
  ["lease_expires_at", (a) => ms(`${a}.lease_expires_at`)],
  ["available_at", (a) => ms(`${a}.available_at`)],
  ["version", (a) => `${a}.version`],
  ["traceparent", (a) => `${a}.traceparent`],
  ["tracestate", (a) => `${a}.tracestate`],
];

/**
 * The columns a task record is read from, in a statement where the table is aliased `a`,
 * less those named in `omit` (a statement that wrote them knows them; see {@link TERMINAL_KNOWN}).
 */
function cols(a: string, omit: readonly string[] = []): string {
  return COLUMNS.filter(([name]) => !omit.includes(name))
    .map(([name, expr]) => {
      const e = expr(a);
      return e === `${a}.${name}` ? e : `${e} AS ${name}`;
    })
    .join(", ");
}

/**
 * The columns a terminal transition does not return: it has just written them from its own
 * parameters (or constants), so the store fills them in (`status`, `status_message`,
 * `result`, `error`, `input_requests`, and the lease it ends), which spares the database and
 * the driver a third of the row, jsonb included.
 */
export const TERMINAL_KNOWN = [
  "status",
  "status_message",
  "result",
  "error",
  "input_requests",
  "lease_holder",
  "lease_expires_at",
  "available_at",
];

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

/**
 * The status message of an orphan put back in the queue: core's `retryingMessage` with
 * placeholders that the statement replaces with the row's numbers, so the wording is core's.
 */
export interface RetryTemplate {
  readonly text: string;
  readonly nextAttempt: string;
  readonly maxAttempts: string;
}

/**
 * How many stripes each owner's usage (and the total) is spread over: `hashtext(id) & 15`.
 * A quota check sums this many rows; concurrent writers rarely wait on the same one.
 */
export const USAGE_STRIPES = 16;

/** The stripe of a task's usage: the same for every write of the task. */
const stripeOf = (id: string) => `(hashtext(${id}) & ${USAGE_STRIPES - 1})::smallint`;

/** The owner key of the table-wide total in the usage table (no owner key is `*`). */
export const TOTAL_KEY = "*";

/** Most owners with queued work one claim looks at (in owner key order beyond it). */
export const MAX_CLAIM_OWNERS = 1000;

/** A text value as an SQL string literal. */
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * An owner's running tasks as core's `countedRunning` counts them, from the running-owner
 * index: `working` claimed rows plus `input_required` ones beyond `maxWaiting`. Each count
 * stops at what can matter (`maxRunning`, `maxRunning + maxWaiting`), so it reads at most
 * that many index entries; a NULL limit is no limit (and waiting tasks then never count).
 */
const runningOf = (T: string, key: string, maxRunning: string, maxWaiting: string) =>
  `((SELECT count(*) FROM (SELECT 1 FROM ${T} AS y WHERE y.owner_key = ${key}
      AND y.lease_holder IS NOT NULL AND y.status = 'working' LIMIT ${maxRunning}) AS w)
    + CASE WHEN ${maxWaiting} IS NULL THEN 0 ELSE greatest(0, (SELECT count(*) FROM (
      SELECT 1 FROM ${T} AS y WHERE y.owner_key = ${key} AND y.lease_holder IS NOT NULL
        AND y.status = 'input_required' LIMIT ${maxWaiting} + ${maxRunning}) AS w) - ${maxWaiting}) END)`;

/** The statements for one table, bounds and notification setting. */
export class Statements {
  readonly create: string;
  readonly createRefusal: string;
  readonly reclaimOwner: string;
  readonly pruneUsage: string;
  readonly usageCounters: string;
  readonly usageRecount: string;
  readonly get: string;
  readonly statusOf: string;
  readonly settle: string;
  readonly requireInput: string;
  readonly setStatusMessage: string;
  readonly requestCancel: string;
  readonly submitInput: string;
  readonly takeInput: string;
  readonly delete: string;
  readonly cleanup: string;
  readonly listOwn: string;
  readonly listWithUnowned: string;
  readonly listNewestOwn: string;
  readonly listNewestWithUnowned: string;
  readonly listNewestAcrossOwners: string;
  readonly getAcrossOwners: string;
  readonly claim: string;
  readonly claimTools: string;
  readonly claimLock: string;
  readonly renewLease: string;
  readonly releaseLease: string;
  readonly requeue: string;
  readonly recoverOrphans: string;

  /**
   * `restartGraceMs`: for this long after the database server (re)started no lease counts
   * as run out (see `DrizzleTaskStoreOptions.restartGraceMs`); 0 for none.
   */
  constructor(
    table: string,
    usageTable: string,
    notify: NotifySettings,
    bounds: Bounds,
    retry: RetryTemplate,
    restartGraceMs = 0,
  ) {
    const T = table;
    const U = usageTable;
    /**
     * A CTE body that adds to the usage counters: `changes` selects rows (id, k owner key,
     * dt tasks added, db bytes added), one per written task. Each task's change goes to its
     * owner's stripe, and its count also to the total's; the rows are summed per counter and
     * upserted in key order, so that concurrent statements lock counters in the same order
     * (no deadlock), after the task rows (every statement locks those first).
     */
    const bump = (changes: string) => `INSERT INTO ${U} AS u (owner_key, stripe, tasks, bytes)
  SELECT c.k, c.s, sum(c.dt), sum(c.db) FROM (
    SELECT ch.k, ${stripeOf("ch.id")} AS s, ch.dt, ch.db FROM (${changes}) AS ch
    UNION ALL
    SELECT '${TOTAL_KEY}', ${stripeOf("ch.id")}, ch.dt, 0 FROM (${changes}) AS ch WHERE ch.dt <> 0
  ) AS c GROUP BY c.k, c.s ORDER BY c.k, c.s
  ON CONFLICT (owner_key, stripe) DO UPDATE SET tasks = u.tasks + excluded.tasks, bytes = u.bytes + excluded.bytes`;
    // The notification, as an extra column of the final SELECT (a SELECT-only CTE that the
    // query does not read would never run). pg_notify returns void: length(''::text) = 0.
    // It may also stand in a RETURNING list, where `a` is the written row. One notification
    // may carry several changes of the row (`kinds`), in order; a kind is a quoted literal or
    // an expression.
    const noteExpr = (a: string, kinds: string[]) =>
      `length(pg_notify('${notify.channel}', json_build_array('${notify.origin}', ${kinds
        .map((k) => `${k}, ${a}.status, ${a}.version, ${a}.id`)
        .join(", ")})::text)::text)`;
    const noteOf = (a: string, ...kinds: string[]) =>
      notify.channel === null ? "" : `, ${noteExpr(a, kinds)} AS _n`;
    const note = (a: string, ...kinds: TaskChangeKind[]) =>
      noteOf(a, ...kinds.map((k) => `'${k}'`));
    const noNote = notify.channel === null ? "" : ", NULL::integer AS _n";

    // Creates, many in one statement (the store batches them like the endings; see
    // write-batcher.ts): $1 now, $2 the new tasks as a JSON array of objects, each with `i`
    // its position in the batch, `id`, `k` the owner key, `pp` `pt` `pa` the owner's parts,
    // `era`, `m` status message, `r` request, `ttl`, `an` ttl anchor, `pi` poll interval,
    // `tn` tool name, `ma` max attempts, `bo` backoff ms, `re` retry on error, `dl` deadline
    // ms, `b` payload bytes (the arguments'), `tp` `ts` trace context, `h` holder and `l` lease
    // ms (null: created queued). Ids are unique in a batch (the store sees to it).
    //
    // The quotas are checked against the usage counters, a fixed number of rows whatever the
    // size of the table: each row of the batch must fit with the rows before it in the batch
    // (running sums in batch order). The counters count stored rows, an upper bound of the
    // live ones, so what they accept fits; a row they refuse is only refused for good once
    // the store has reclaimed the expired rows involved (see `reclaimOwner`, `cleanup`).
    // Concurrent statements may overshoot a bound by up to the rows in flight, as before.
    // It returns only what the caller does not know: the creation time (database clock), the
    // lease deadline and the version; the store builds the record from its own input. Created
    // queued (no holder), a task is announced as created and queued, in one notification.
    // `alone`: whether the row would fit by itself; only such rows count in the running sums
    // of the rows after them, so that one that can never fit does not refuse the others.
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
    const createNote =
      notify.channel === null
        ? ""
        : `, CASE WHEN t.lease_holder IS NULL THEN ${noteExpr("t", ["'created'", "'queued'"])}
      ELSE ${noteExpr("t", ["'created'"])} END AS _n`;
    const batchRows = `jsonb_to_recordset($2::text::jsonb) AS v(i integer, id text, k text, pp text,
    pt text, pa text, era text, m text, r jsonb, ttl bigint, an text, pi bigint, tn text,
    ma integer, bo integer, re boolean, dl bigint, b bigint, tp text, ts text, h text, l bigint,
    ol boolean, nm boolean, mr bigint, mw bigint)`;
    // Under owner limits (`ol`, core's `NewTask.ownerLimits` with `mr` and `mw` its limits), a
    // row is claimed at creation only while its owner is under `mr` (counted from the
    // running-owner index, so it costs at most `mr + mw` index entries), and a row created
    // queued without a message (`nm`: none given) says why it waits: core's owner-limit message, or its owner's queued rows
    // ahead of it, counted up to QUEUE_AHEAD_COUNT_LIMIT from the claim-owner index (plus the
    // owner's rows before it in the batch). The store serialises creates that may claim with
    // the claims (see the store), a batch of them per statement, so the count is exact for them.
    const ahead = `(SELECT count(*) FROM (SELECT 1 FROM ${T} AS y WHERE y.owner_key = f.k
      AND y.lease_holder IS NULL AND y.status IN ${ACTIVE} LIMIT ${QUEUE_AHEAD_COUNT_LIMIT}) AS q)
      + count(*) FILTER (WHERE f.hh IS NULL) OVER (PARTITION BY f.k ORDER BY f.i ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)`;
    const aheadMessage = (n: string) =>
      `CASE WHEN ${n} >= ${QUEUE_AHEAD_COUNT_LIMIT} THEN ${literal(queuedAheadMessage(QUEUE_AHEAD_COUNT_LIMIT))}
        ELSE replace(${literal(queuedAheadMessage(-1))}, '-1', (${n})::text) END`;
    // `running` also counts the owner's rows before it in the batch that would run at once:
    // the store groups such creates into one statement too.
    const limited = `f00 AS (
  SELECT v.*, CASE WHEN v.ol THEN ${runningOf(T, "v.k", "v.mr", "v.mw")} ELSE 0 END AS stored_running FROM v
), f0 AS (
  SELECT f00.*, f00.stored_running + count(*) FILTER (WHERE f00.h IS NOT NULL AND f00.ol)
    OVER (PARTITION BY f00.k ORDER BY f00.i ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS running
  FROM f00
), f1 AS (
  SELECT f0.*, CASE WHEN f0.h IS NOT NULL AND f0.ol AND f0.mr IS NOT NULL AND f0.running >= f0.mr
    THEN NULL ELSE f0.h END AS hh FROM f0
), f AS (
  SELECT f.*, CASE WHEN NOT (f.ol AND f.hh IS NULL AND f.nm) THEN f.m
    WHEN f.mr IS NOT NULL AND f.running >= f.mr THEN ${literal(QUEUED_OWNER_LIMIT_MESSAGE)}
    ELSE ${aheadMessage(ahead)} END AS mm FROM f1 AS f
)`;
    const checked = bounded
      ? `WITH b AS (SELECT * FROM ${batchRows}), a AS (
  SELECT v.*, (${fits("1", "1", "v.b")}) AS alone FROM (
    SELECT b.*,
      (SELECT coalesce(sum(x.tasks), 0) FROM ${U} AS x WHERE x.owner_key = '${TOTAL_KEY}') AS all_tasks,
      coalesce(o.tasks, 0) AS own_tasks, coalesce(o.bytes, 0) AS own_bytes
    FROM b LEFT JOIN (SELECT x.owner_key, sum(x.tasks) AS tasks, sum(x.bytes) AS bytes FROM ${U} AS x
      WHERE x.owner_key IN (SELECT DISTINCT b.k FROM b) GROUP BY x.owner_key) AS o ON o.owner_key = b.k
  ) AS v
), v AS (
  SELECT a.*,
    sum(a.alone::int) OVER (ORDER BY a.i) AS run_all,
    sum(a.alone::int) OVER (PARTITION BY a.k ORDER BY a.i) AS run_own,
    sum(CASE WHEN a.alone THEN a.b ELSE 0 END) OVER (PARTITION BY a.k ORDER BY a.i) AS run_bytes
  FROM a
)`
      : `WITH v AS (SELECT * FROM ${batchRows})`;
    this.create = `${checked}, ${limited}, n AS (SELECT ${nowOf("$1")} AS now), ins AS (
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
  ${bump("SELECT ins.id, ins.owner_key AS k, 1 AS dt, ins.payload_bytes AS db FROM ins")}
) SELECT v.i, ${ms("ins.created_at")} AS created_at, ${ms("ins.lease_expires_at")} AS lease_expires_at,
  ins.version, ins.lease_holder, ins.status_message FROM ins JOIN v ON v.id = ins.id`;

    // Why a create inserted nothing: $1 id, $2 owner key. The counters, which the store
    // compares with its bounds to say which one was hit (after reclaiming expired rows).
    this.createRefusal = `SELECT EXISTS (SELECT 1 FROM ${T} WHERE id = $1) AS taken,
  (SELECT coalesce(sum(x.tasks), 0) FROM ${U} AS x WHERE x.owner_key = '${TOTAL_KEY}')::float8 AS total,
  (SELECT coalesce(sum(x.tasks), 0) FROM ${U} AS x WHERE x.owner_key = $2)::float8 AS own,
  (SELECT coalesce(sum(x.bytes), 0) FROM ${U} AS x WHERE x.owner_key = $2)::float8 AS own_bytes`;

    this.get = `SELECT ${cols("t")} FROM ${T} AS t WHERE t.id = $1 AND ${SCOPE} AND ${LIVE}`;
    this.statusOf = `SELECT t.status FROM ${T} AS t WHERE t.id = $1 AND ${SCOPE} AND ${LIVE}`;

    // A fenced write of a running task (see FENCE); its own parameters from $7.
    const update = (set: string, kind: TaskChangeKind, extraWhere = "") =>
      `UPDATE ${T} AS t
  SET ${set}, updated_at = n.now, version = t.version + 1
  FROM (SELECT ${nowOf("$4")} AS now) AS n
  WHERE t.id = $1 AND ${SCOPE} AND t.status IN ${ACTIVE} AND ${FENCE}${extraWhere}
  RETURNING ${cols("t")}${note("t", kind)}`;

    // Terminal transitions, many tasks in one statement (the store batches them; see
    // write-batcher.ts): $1 now, $2 the outcomes as a JSON array of objects, each with `i`
    // its position in the batch, `id`, `o` the scope's owner key, `u` whether the scope
    // includes unowned tasks, `h` and `f` the fence's holder and token (or null), `s` the
    // status, `r` result, `e` error, `m` status message, `b` the outcome's payload bytes (never
    // refused: a run's outcome is kept, and counted). Each row has its own scope and fence;
    // a row that does not apply returns nothing and the store asks why. No run holds the
    // task any more: the lease ends with it. Cancelling implies the request: an immediate
    // cancel records both in one write. The ids also reach the table as an array, so the
    // rows are found through the primary key whatever the planner makes of the JSON. The
    // outcome's bytes are added to the owner's usage counters in the same statement.
    this.settle = `WITH u AS (
  UPDATE ${T} AS t
  SET status = v.s, result = v.r, error = v.e, status_message = v.m,
    payload_bytes = t.payload_bytes + v.b,
    expires_at = ${EXPIRY}, input_requests = '{}'::jsonb,
    lease_holder = NULL, lease_expires_at = NULL, available_at = NULL,
    cancel_requested_at = CASE WHEN v.s = 'cancelled' THEN coalesce(t.cancel_requested_at, n.now)
      ELSE t.cancel_requested_at END,
    updated_at = n.now, version = t.version + 1
  FROM jsonb_to_recordset($2::text::jsonb)
      AS v(i integer, id text, o text, u boolean, h text, f integer, s text, r jsonb, e jsonb, m text, b bigint),
    (SELECT ${nowOf("$1")} AS now) AS n
  WHERE t.id = ANY(ARRAY(SELECT x ->> 'id' FROM jsonb_array_elements($2::text::jsonb) AS x))
    AND t.id = v.id AND (t.owner_key = v.o OR (v.u AND t.owner_key = ''))
    AND t.status IN ${ACTIVE} AND (v.h IS NULL OR (t.lease_holder = v.h AND t.fencing_token = v.f))
  RETURNING v.i, v.b AS added_bytes, t.owner_key AS usage_key, ${cols("t", TERMINAL_KNOWN)}${note("t", "status_changed")}
), counted AS (
  ${bump("SELECT u.id, u.usage_key AS k, 0 AS dt, u.added_bytes AS db FROM u WHERE u.added_bytes <> 0")}
) SELECT u.* FROM u`;

    // $7 requests (an object), $8 whether to set the message, $9 the message. Keys must be new
    // to the whole ledger: outstanding, received and answered keys are all refused.
    this.requireInput = update(
      `status = 'input_required', input_requests = t.input_requests || $7::text::jsonb,
    status_message = CASE WHEN $8::boolean THEN $9::text ELSE t.status_message END`,
      "input_requested",
      ` AND NOT jsonb_exists_any(t.input_requests, ARRAY(SELECT jsonb_object_keys($7::text::jsonb)))
    AND NOT jsonb_exists_any(t.input_responses, ARRAY(SELECT jsonb_object_keys($7::text::jsonb)))
    AND NOT jsonb_exists_any(t.answered_input_keys, ARRAY(SELECT jsonb_object_keys($7::text::jsonb)))`,
    );

    // $7 the message.
    this.setStatusMessage = update("status_message = $7::text", "status_message");

    // Idempotent: when nothing changes, the same statement returns the task as it is.
    const orCurrent = (extraCols: string) =>
      `SELECT false AS changed${extraCols}, ${cols("t")}${noNote} FROM ${T} AS t
  WHERE t.id = $1 AND ${SCOPE} AND ${LIVE} AND NOT EXISTS (SELECT 1 FROM u)`;

    this.requestCancel = `WITH u AS (
  UPDATE ${T} AS t SET cancel_requested_at = n.now, updated_at = n.now, version = t.version + 1
  FROM (SELECT ${nowOf("$4")} AS now) AS n
  WHERE t.id = $1 AND ${SCOPE} AND t.status IN ${ACTIVE} AND t.cancel_requested_at IS NULL
  RETURNING ${cols("t")}
) SELECT true AS changed, u.*${note("u", "cancel_requested")} FROM u
UNION ALL ${orCurrent("")}`;

    // $5 responses (an object), $6 their keys in the caller's order (a JSON array), $7 each
    // answer's payload bytes by key (an object). The row is locked first, so the accepted keys
    // are computed from the version being updated. The answers are also kept for the task's
    // lifetime (input_answers) and their bytes count against the task's owner (its usage
    // counters, updated in the same statement): past maxBytesPerOwner nothing is written and
    // the row says over_quota (the store reclaims the owner's expired rows and tries again).
    const answerRoom =
      bounds.maxBytesPerOwner === null
        ? "true"
        : `ans.added = 0 OR (SELECT coalesce(sum(x.bytes), 0) FROM ${U} AS x
      WHERE x.owner_key = ans.owner_key) + ans.added <= ${bounds.maxBytesPerOwner}`;
    this.submitInput = `WITH cur AS (
  SELECT t.id, t.owner_key, t.input_requests FROM ${T} AS t
  WHERE t.id = $1 AND ${SCOPE} AND t.status IN ${ACTIVE} FOR UPDATE
), acc AS (
  SELECT cur.id,
    coalesce((SELECT jsonb_agg(e.k ORDER BY e.o)
      FROM jsonb_array_elements_text($6::text::jsonb) WITH ORDINALITY AS e(k, o)
      WHERE jsonb_exists(cur.input_requests, e.k)), '[]'::jsonb) AS keys,
    cur.input_requests - ARRAY(SELECT jsonb_array_elements_text($6::text::jsonb)) AS pending
  FROM cur
), ans AS (
  SELECT acc.*, cur.owner_key, (SELECT jsonb_object_agg(k.value, $5::text::jsonb -> k.value)
    FROM jsonb_array_elements_text(acc.keys) AS k) AS answers,
    (SELECT coalesce(sum(($7::text::jsonb ->> k.value)::bigint), 0)
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
  FROM fit AS ans, (SELECT ${nowOf("$4")} AS now) AS n
  WHERE t.id = ans.id AND jsonb_array_length(ans.keys) > 0 AND ans.room
  RETURNING ans.keys AS accepted, false AS over_quota, ${cols("t")}
), counted AS (
  ${bump("SELECT u.id, f.owner_key AS k, 0 AS dt, f.added AS db FROM u JOIN fit AS f ON f.id = u.id WHERE f.added <> 0")}
) SELECT true AS changed, u.*${note("u", "input_submitted")} FROM u
UNION ALL ${orCurrent(
      `, '[]'::jsonb AS accepted,
    coalesce((SELECT NOT f.room FROM fit AS f WHERE jsonb_array_length(f.keys) > 0), false) AS over_quota`,
    )}`;

    // Fenced. Draining is the worker's bookkeeping: the version moves, lastUpdatedAt does not.
    // When nothing is drained the task comes back as it is, and the store checks the fence.
    this.takeInput = `WITH cur AS (
  SELECT t.id, t.input_responses FROM ${T} AS t
  WHERE t.id = $1 AND ${SCOPE} AND ${LIVE} AND ${FENCE} FOR UPDATE
), u AS (
  UPDATE ${T} AS t SET input_responses = '{}'::jsonb, version = t.version + 1
  FROM cur WHERE t.id = cur.id AND cur.input_responses <> '{}'::jsonb
  RETURNING cur.input_responses AS taken, ${cols("t")}
) SELECT true AS changed, u.*${note("u", "input_taken")} FROM u
UNION ALL ${orCurrent(", '{}'::jsonb AS taken")}`;

    // Deletes give their row and bytes back to the usage counters in the same statement.
    this.delete = `WITH d AS (
  DELETE FROM ${T} AS t WHERE t.id = $1 AND ${SCOPE} AND ${LIVE}
  RETURNING t.id, t.owner_key, t.payload_bytes, t.status, t.version
), counted AS (
  ${bump("SELECT d.id, d.owner_key AS k, -1 AS dt, -d.payload_bytes AS db FROM d")}
) SELECT d.id, d.status, d.version${note("d", "deleted")} FROM d`;

    // $1 now, $2 batch size. SKIP LOCKED: concurrent sweepers take disjoint batches. One
    // statement per batch, the usage counters included: no round trip per row.
    this.cleanup = `WITH d AS (
  DELETE FROM ${T} AS t WHERE t.id IN (
    SELECT x.id FROM ${T} AS x WHERE x.expires_at <= ${nowOf("$1")}
    ORDER BY x.expires_at LIMIT $2::bigint FOR UPDATE SKIP LOCKED)
  RETURNING t.id, t.owner_key, t.payload_bytes, t.status, t.version
), counted AS (
  ${bump("SELECT d.id, d.owner_key AS k, -1 AS dt, -d.payload_bytes AS db FROM d")}
) SELECT d.id, d.status, d.version${note("d", "deleted")} FROM d`;

    // The same for one owner's expired rows ($3 its key), through mcp_tasks_owner_expires_idx:
    // what a create or an answer refused by the owner's counters reclaims before it is refused
    // for good.
    this.reclaimOwner = `WITH d AS (
  DELETE FROM ${T} AS t WHERE t.id IN (
    SELECT x.id FROM ${T} AS x WHERE x.owner_key = $3::text AND x.expires_at <= ${nowOf("$1")}
    ORDER BY x.expires_at LIMIT $2::bigint FOR UPDATE SKIP LOCKED)
  RETURNING t.id, t.owner_key, t.payload_bytes, t.status, t.version
), counted AS (
  ${bump("SELECT d.id, d.owner_key AS k, -1 AS dt, -d.payload_bytes AS db FROM d")}
) SELECT d.id, d.status, d.version${note("d", "deleted")} FROM d`;

    // Counters of owners that hold nothing any more (the total's stay). A counter row is only
    // zero when no stored task maps to it, so removing one loses nothing; SKIP LOCKED: a
    // counter being written is left alone (and is then not zero, or is pruned next time).
    this.pruneUsage = `DELETE FROM ${U} AS u WHERE (u.owner_key, u.stripe) IN (
  SELECT x.owner_key, x.stripe FROM ${U} AS x
  WHERE x.tasks = 0 AND x.bytes = 0 AND x.owner_key <> '${TOTAL_KEY}'
  FOR UPDATE SKIP LOCKED)`;

    // What the counters say, and the same counted from the task table (tests, audits).
    this.usageCounters = `SELECT u.owner_key, sum(u.tasks)::float8 AS tasks, sum(u.bytes)::float8 AS bytes
  FROM ${U} AS u GROUP BY u.owner_key`;
    this.usageRecount = `SELECT t.owner_key, count(*)::float8 AS tasks, sum(t.payload_bytes)::float8 AS bytes
  FROM ${T} AS t GROUP BY t.owner_key`;

    // $1 owner key, $2 after seq, $3 now, $4 statuses (comma-separated) or NULL, $5 limit.
    const page = (
      ownerKey: string,
      key = "",
    ) => `SELECT${key} t.seq::float8 AS seq, ${cols("t")} FROM ${T} AS t
  WHERE t.owner_key = ${ownerKey} AND t.seq > $2::bigint
    AND (t.expires_at IS NULL OR t.expires_at > ${nowOf("$3")})
    AND ($4::text IS NULL OR t.status = ANY(string_to_array($4::text, ',')))
  ORDER BY t.seq LIMIT $5::bigint`;
    this.listOwn = page("$1::text");
    // Two ordered index scans merged (Merge Append), rather than an OR that would force a
    // sort. The merge key is the bigint seq itself: ordering by its float8 copy would not
    // match the scans' order and the planner would sort.
    this.listWithUnowned = `SELECT * FROM ((${page("$1::text", " t.seq AS k,")}) UNION ALL (${page("''", " t.seq AS k,")})) AS p
  ORDER BY p.k LIMIT $5::bigint`;

    // Newest first, for consoles. $1 owner key, $2 before seq, $3 now, $4 statuses
    // (comma-separated) or NULL, $5 limit, $6 tool names (a JSON array) or NULL. The owner's
    // scan walks mcp_tasks_owner_seq_idx backwards; the filters are applied on the way.
    const newestFilters = (before: string, now: string, statuses: string, tools: string) =>
      `t.seq < ${before}::bigint
    AND (t.expires_at IS NULL OR t.expires_at > ${nowOf(now)})
    AND (${statuses}::text IS NULL OR t.status = ANY(string_to_array(${statuses}::text, ',')))
    AND (${tools}::text IS NULL OR t.tool_name = ANY(ARRAY(SELECT jsonb_array_elements_text(${tools}::text::jsonb))))`;
    const newest = (
      ownerKey: string,
      key = "",
    ) => `SELECT${key} t.seq::float8 AS seq, ${cols("t")} FROM ${T} AS t
  WHERE t.owner_key = ${ownerKey} AND ${newestFilters("$2", "$3", "$4", "$6")}
  ORDER BY t.seq DESC LIMIT $5::bigint`;
    this.listNewestOwn = newest("$1::text");
    this.listNewestWithUnowned = `SELECT * FROM ((${newest("$1::text", " t.seq AS k,")}) UNION ALL (${newest("''", " t.seq AS k,")})) AS p
  ORDER BY p.k DESC LIMIT $5::bigint`;
    // The operator's view, every owner: $1 before seq, $2 now, $3 statuses or NULL, $4 limit,
    // $5 tool names or NULL. No index on seq alone: a top-N sort over the live rows, which
    // is fine for an operator's occasional page (no migration for it).
    this.listNewestAcrossOwners = `SELECT t.seq::float8 AS seq, ${cols("t")} FROM ${T} AS t
  WHERE ${newestFilters("$1", "$2", "$3", "$5")}
  ORDER BY t.seq DESC LIMIT $4::bigint`;
    // $1 task id, $2 now: the operator's read, whoever owns the task.
    this.getAcrossOwners = `SELECT ${cols("t")} FROM ${T} AS t WHERE t.id = $1 AND (t.expires_at IS NULL OR t.expires_at > ${nowOf("$2")})`;

    // ---------------------------------------------------------------- the queue

    // $1 holder, $2 lease ms, $3 now, $4 most tasks, $5 maxRunningPerOwner, $6
    // maxWaitingPerOwner (NULL: no limit); claimTools: $7 tool names (a JSON array). The store
    // runs it in a transaction right after taking the claim lock (an advisory lock), so claims
    // on every node run one at a time and each sees the ones before it: the running counts are
    // exact and two nodes cannot together take an owner past its limit. Fair across owners:
    // the owners with queued work, found by skipping from one owner key to the next on the
    // claim-owner index (a loose index scan: one index probe per owner, whatever the backlog),
    // at most MAX_CLAIM_OWNERS of them; each owner's running count (core's `countedRunning`);
    // the oldest claimable rows of each owner under its limit, up to its room; then the rows in
    // turn, the owner with the fewest running tasks first (the rows this claim takes included)
    // and ties to the older row. The picked rows are updated through the primary key: the
    // re-check that nobody took or ended a row meanwhile is worded so that it does not match
    // the claim-owner index's predicate (holders are never empty), or the planner, misled by
    // stale statistics, walks that whole index instead. Each gets the next run: attempt and fencing token
    // + 1, the holder and a lease. A row changed meanwhile by another writer (cancelled,
    // deleted) is re-checked by the UPDATE and skipped. The picked rows are locked as they
    // are picked, skipping rows another transaction holds: without an owner limit the store
    // sends the claim without the claim lock, and claims running side by side then take
    // disjoint rows and never wait for each other's row locks (no deadlock).
    const claim = (tools: boolean) => `WITH RECURSIVE o(k) AS (
  (SELECT x.owner_key FROM ${T} AS x WHERE x.lease_holder IS NULL AND x.status IN ${ACTIVE}
    ORDER BY x.owner_key LIMIT 1)
  UNION ALL
  SELECT (SELECT x.owner_key FROM ${T} AS x WHERE x.lease_holder IS NULL AND x.status IN ${ACTIVE}
    AND x.owner_key > o.k ORDER BY x.owner_key LIMIT 1) FROM o WHERE o.k IS NOT NULL
), owners AS (
  SELECT w.k, w.running FROM (
    SELECT o.k, ${runningOf(T, "o.k", "$5::bigint", "$6::bigint")} AS running
    FROM (SELECT o.k FROM o WHERE o.k IS NOT NULL LIMIT ${MAX_CLAIM_OWNERS}) AS o
  ) AS w WHERE $5::bigint IS NULL OR w.running < $5::bigint
), cand AS (
  SELECT c.id, c.seq, ow.running + row_number() OVER (PARTITION BY ow.k ORDER BY c.seq) AS turn
  FROM owners AS ow CROSS JOIN LATERAL (
    SELECT x.id, x.seq FROM ${T} AS x
    WHERE x.owner_key = ow.k AND x.lease_holder IS NULL AND x.status IN ${ACTIVE}
      AND (x.available_at IS NULL OR x.available_at <= ${nowOf("$3")})${
        tools
          ? `
      AND x.tool_name = ANY(ARRAY(SELECT jsonb_array_elements_text($7::text::jsonb)))`
          : ""
      }
    ORDER BY x.seq LIMIT least($4::bigint, $5::bigint - ow.running)
    FOR UPDATE OF x SKIP LOCKED
  ) AS c
), c AS (
  SELECT cand.id FROM cand ORDER BY cand.turn, cand.seq LIMIT $4::bigint
)
UPDATE ${T} AS t SET attempt = t.attempt + 1, fencing_token = t.fencing_token + 1,
    lease_holder = $1::text, lease_expires_at = n.now + ${msInterval("$2")},
    available_at = NULL, version = t.version + 1
  FROM (SELECT ${nowOf("$3")} AS now) AS n
  WHERE t.id = ANY(ARRAY(SELECT c.id FROM c))
    AND coalesce(t.lease_holder, '') = '' AND t.status <> ALL(ARRAY['completed', 'failed', 'cancelled'])
  RETURNING t.seq::float8 AS seq, ${cols("t")}${note("t", "claimed")}`;
    // Taken before each claim, and before each create that may claim ($1 the table's name).
    this.claimLock = "SELECT pg_advisory_xact_lock(hashtext($1::text))";
    this.claim = claim(false);
    this.claimTools = claim(true);

    // Fenced; $7 lease ms. Bookkeeping: no version bump, no event.
    this.renewLease = `UPDATE ${T} AS t SET lease_expires_at = n.now + ${msInterval("$7")}
  FROM (SELECT ${nowOf("$4")} AS now) AS n
  WHERE t.id = $1 AND ${SCOPE} AND t.status IN ${ACTIVE} AND ${FENCE} AND t.lease_holder IS NOT NULL
  RETURNING t.id`;

    // Back to the queue (core's `requeueTask`): the task stays running (`working`), no run
    // holds it, the questions of the abandoned run are dropped (their answers stay). A task
    // whose cancellation was requested is not queued again: it ends `cancelled` (core's
    // `endCancelRequested`) with the message `cancelledMessage`, keeping its attempt count
    // and untaken responses like any terminal write.
    const CANCEL_REQUESTED = "t.cancel_requested_at IS NOT NULL";
    const toQueueOrCancelled = (q: {
      readonly message: string;
      readonly availableAt: string;
      readonly attempt: string;
      readonly cancelledMessage: string;
    }) => `status = CASE WHEN ${CANCEL_REQUESTED} THEN 'cancelled' ELSE 'working' END,
    status_message = CASE WHEN ${CANCEL_REQUESTED} THEN ${q.cancelledMessage} ELSE ${q.message} END,
    expires_at = CASE WHEN ${CANCEL_REQUESTED} THEN ${EXPIRY} ELSE t.expires_at END,
    input_requests = '{}'::jsonb,
    input_responses = CASE WHEN ${CANCEL_REQUESTED} THEN t.input_responses ELSE '{}'::jsonb END,
    available_at = CASE WHEN ${CANCEL_REQUESTED} THEN NULL::timestamptz ELSE ${q.availableAt} END,
    attempt = CASE WHEN ${CANCEL_REQUESTED} THEN t.attempt ELSE ${q.attempt} END,
    lease_holder = NULL, lease_expires_at = NULL`;
    const queuedOrEnded = noteOf(
      "t",
      "CASE WHEN t.status = 'cancelled' THEN 'status_changed' ELSE 'queued' END",
    );

    // Fenced; $7 status message, $8 the message of a cancel-requested task. A stopping
    // worker hands the task back: claimable at once, its attempt not counted.
    this.releaseLease = `UPDATE ${T} AS t SET ${toQueueOrCancelled({
      message: "$7::text",
      availableAt: "NULL",
      attempt: "greatest(t.attempt - 1, 0)",
      cancelledMessage: "$8::text",
    })},
    updated_at = n.now, version = t.version + 1
  FROM (SELECT ${nowOf("$4")} AS now) AS n
  WHERE t.id = $1 AND ${SCOPE} AND t.status IN ${ACTIVE} AND ${FENCE} AND t.lease_holder IS NOT NULL
  RETURNING t.id, t.status, t.version${queuedOrEnded}`;

    // Fenced; $7 status message, $8 the message of a cancel-requested task. The run gives up
    // and asks for another attempt: claimable after the task's backoff, the attempt counted.
    const backoff = `CASE WHEN t.backoff_ms > 0 THEN n.now + ${msInterval("t.backoff_ms")} END`;
    this.requeue = `UPDATE ${T} AS t SET ${toQueueOrCancelled({
      message: "$7::text",
      availableAt: backoff,
      attempt: "t.attempt",
      cancelledMessage: "$8::text",
    })},
    updated_at = n.now, version = t.version + 1
  FROM (SELECT ${nowOf("$4")} AS now) AS n
  WHERE t.id = $1 AND ${SCOPE} AND t.status IN ${ACTIVE} AND ${FENCE}
  RETURNING ${cols("t")}${queuedOrEnded}`;

    // $1 now, $2 batch size, $3 error, $4 its message, $5 the retry message template, $6 the
    // error's payload bytes (counted when the orphan is failed), $7 the message of a
    // cancel-requested orphan. Running tasks whose lease ran out, oldest deadline first,
    // SKIP LOCKED so that concurrent sweepers take disjoint rows. As core's `recoverOrphan`:
    // `cancelled` when a cancellation was requested; else back to the queue after the
    // backoff while attempts remain; otherwise failed "Worker lost". Returns each recovered
    // row whole, as written, so the store hands the ended ones back as task records.
    const cancelled = CANCEL_REQUESTED;
    const retrying = `(NOT ${cancelled} AND t.attempt < t.max_attempts)`;
    const failing = `(NOT ${cancelled} AND t.attempt >= t.max_attempts)`;
    const message = `replace(replace($5::text, '${retry.nextAttempt}', (t.attempt + 1)::text), '${retry.maxAttempts}', t.max_attempts::text)`;
    // The server's own clock and start time: while it was away no holder could renew, so
    // right after it is back nothing is taken from a holder that is renewing again.
    const afterRestartGrace =
      restartGraceMs > 0
        ? `
    AND now() >= pg_postmaster_start_time() + ${msInterval(String(restartGraceMs))}`
        : "";
    this.recoverOrphans = `WITH o AS (
  SELECT x.id FROM ${T} AS x
  WHERE x.status IN ${ACTIVE} AND x.lease_holder IS NOT NULL
    AND x.lease_expires_at IS NOT NULL AND x.lease_expires_at <= ${nowOf("$1")}${afterRestartGrace}
  ORDER BY x.lease_expires_at LIMIT $2::bigint FOR UPDATE SKIP LOCKED
), u AS (
  UPDATE ${T} AS t SET
    status = CASE WHEN ${cancelled} THEN 'cancelled' WHEN ${retrying} THEN 'working' ELSE 'failed' END,
    error = CASE WHEN ${failing} THEN $3::text::jsonb ELSE t.error END,
    payload_bytes = CASE WHEN ${failing} THEN t.payload_bytes + $6::bigint ELSE t.payload_bytes END,
    status_message = CASE WHEN ${cancelled} THEN $7::text WHEN ${retrying} THEN ${message} ELSE $4::text END,
    expires_at = CASE WHEN ${retrying} THEN t.expires_at ELSE ${EXPIRY} END,
    input_responses = CASE WHEN ${retrying} THEN '{}'::jsonb ELSE t.input_responses END,
    available_at = CASE WHEN ${retrying} THEN ${backoff} END,
    input_requests = '{}'::jsonb, lease_holder = NULL, lease_expires_at = NULL,
    updated_at = n.now, version = t.version + 1
  FROM o, (SELECT ${nowOf("$1")} AS now) AS n
  WHERE t.id = o.id AND t.status IN ${ACTIVE} AND t.lease_holder IS NOT NULL
  RETURNING ${cols("t")}, t.owner_key AS usage_key, t.payload_bytes AS usage_bytes
), counted AS (
  ${bump(`SELECT u.id, u.usage_key AS k, 0 AS dt, u.usage_bytes - x.payload_bytes AS db
    FROM u JOIN ${T} AS x ON x.id = u.id WHERE u.usage_bytes <> x.payload_bytes`)}
) SELECT u.*${noteOf("u", "CASE WHEN u.status = 'working' THEN 'queued' ELSE 'status_changed' END")} FROM u`;
  }
}
