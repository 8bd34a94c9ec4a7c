import type { TaskChangeKind } from "@mcp-tasks/core";

/*
 * Every statement the store sends, as text with numbered parameters. Each lifecycle
 * operation is ONE statement: a conditional UPDATE (or INSERT/DELETE) whose WHERE clause
 * holds the owner scope and the statuses the operation may start from, so there is no
 * read-modify-write for a concurrent writer to interleave with, and one round trip.
 *
 * Parameter conventions of the by-id statements: $1 task id, $2 the scope's owner key,
 * $3 whether the scope includes unowned tasks, $4 the injected clock's time in ms or NULL
 * for the database clock. Operation-specific parameters follow from $5.
 */

/** `now` from the injected clock when given, else the database clock. */
const nowOf = (param: string) => `coalesce(to_timestamp(${param}::float8 / 1000), now())`;

/**
 * Milliseconds since the epoch of a timestamptz column, as a JS number. date_part works in
 * float8 (extract would build a numeric and convert it through text); the columns hold whole
 * milliseconds and the float error is far below one, so round() gives them back exactly.
 */
const ms = (column: string) => `round(date_part('epoch', ${column}) * 1000)`;

const ACTIVE = "('working', 'input_required')";
const SCOPE = "(t.owner_key = $2 OR ($3::boolean AND t.owner_key = ''))";
const LIVE = `(t.expires_at IS NULL OR t.expires_at > ${nowOf("$4")})`;

/** When a task ending at `n.now` may be removed (see core's `expiryOnTerminal`). */
const EXPIRY = `CASE WHEN t.ttl_anchor = 'creation' THEN t.created_at ELSE n.now END + t.ttl_ms::float8 * interval '1 millisecond'`;

/**
 * The columns a task record is read from, in a statement where the table is aliased `a`,
 * less those named in `omit` (a statement that wrote them knows them; see {@link TERMINAL_KNOWN}).
 */
function cols(a: string, omit: readonly string[] = []): string {
  return [
    `${a}.id`,
    `${a}.status`,
    `${a}.status_message`,
    `${ms(`${a}.created_at`)} AS created_at`,
    `${ms(`${a}.updated_at`)} AS updated_at`,
    `${a}.ttl_ms::float8 AS ttl_ms`,
    `${a}.ttl_anchor`,
    `${ms(`${a}.expires_at`)} AS expires_at`,
    `${a}.poll_interval_ms::float8 AS poll_interval_ms`,
    `${a}.owner_principal`,
    `${a}.owner_tenant`,
    `${a}.owner_audience`,
    `${a}.era`,
    `${a}.request`,
    `${a}.result`,
    `${a}.error`,
    `${a}.input_requests`,
    `${a}.input_responses`,
    `${a}.answered_input_keys`,
    `${ms(`${a}.cancel_requested_at`)} AS cancel_requested_at`,
    `${a}.version`,
  ]
    .filter((c) => !omit.includes(c.slice(a.length + 1).split(/[ ,:]/)[0]!))
    .join(", ");
}

/**
 * The columns a terminal transition does not return: it has just written them from its own
 * parameters (or constants), so the store fills them in (`status`, `status_message`,
 * `result`, `error`, `input_requests`), which spares the database and the driver a third of
 * the row, jsonb included.
 */
export const TERMINAL_KNOWN = ["status", "status_message", "result", "error", "input_requests"];

/** How the statements announce changes. */
export interface NotifySettings {
  /** NOTIFY from inside each write statement (same transaction) on this channel, or not. */
  readonly channel: string | null;
  /** This store's id, carried in each notification so the store can skip its own. */
  readonly origin: string;
}

/** Bounds enforced inside the create statement. */
export interface Bounds {
  readonly maxTasks: number | null;
  readonly maxTasksPerOwner: number | null;
}

/** The statements for one table, bounds and notification setting. */
export class Statements {
  readonly create: string;
  readonly get: string;
  readonly statusOf: string;
  readonly complete: string;
  readonly fail: string;
  readonly markCancelled: string;
  readonly requireInput: string;
  readonly setStatusMessage: string;
  readonly requestCancel: string;
  readonly submitInput: string;
  readonly takeInput: string;
  readonly delete: string;
  readonly cleanup: string;
  readonly listOwn: string;
  readonly listWithUnowned: string;
  readonly renewLease: string;
  readonly releaseLease: string;
  readonly failOrphans: string;

  constructor(table: string, notify: NotifySettings, bounds: Bounds) {
    const T = table;
    // The notification, as an extra column of the final SELECT (a SELECT-only CTE that the
    // query does not read would never run). pg_notify returns void: length(''::text) = 0.
    // It may also stand in a RETURNING list, where `a` is the written row.
    const note = (a: string, kind: TaskChangeKind) =>
      notify.channel === null
        ? ""
        : `, length(pg_notify('${notify.channel}', json_build_array('${notify.origin}', '${kind}', ${a}.status, ${a}.version, ${a}.id)::text)::text) AS _n`;
    const noNote = notify.channel === null ? "" : ", NULL::integer AS _n";

    const boundChecks: string[] = [];
    if (bounds.maxTasks !== null) {
      boundChecks.push(
        `(SELECT count(*) FROM ${T} AS x WHERE x.expires_at IS NULL OR x.expires_at > n.now) < ${bounds.maxTasks}`,
      );
    }
    if (bounds.maxTasksPerOwner !== null) {
      boundChecks.push(
        `(SELECT count(*) FROM ${T} AS x WHERE x.owner_key = $2 AND (x.expires_at IS NULL OR x.expires_at > n.now)) < ${bounds.maxTasksPerOwner}`,
      );
    }
    const where = boundChecks.length === 0 ? "" : `WHERE ${boundChecks.join(" AND ")}`;

    // $1 id, $2 owner key, $3-$5 owner parts, $6 era, $7 status message, $8 request,
    // $9 ttl, $10 ttl anchor, $11 poll interval, $12 lease holder, $13 lease ms, $14 now.
    // It returns only what the caller does not know: the creation time (database clock) and
    // the version; the store builds the record from its own input.
    this.create = `INSERT INTO ${T} AS t (id, owner_key, owner_principal, owner_tenant, owner_audience, era, status,
    status_message, request, ttl_ms, ttl_anchor, poll_interval_ms, created_at, updated_at,
    lease_holder, lease_expires_at)
  SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, 'working', $7::text, $8::text::jsonb,
    $9::bigint, $10::text, $11::bigint, n.now, n.now, $12::text,
    n.now + $13::float8 * interval '1 millisecond'
  FROM (SELECT ${nowOf("$14")} AS now) AS n
  ${where}
  ON CONFLICT (id) DO NOTHING
  RETURNING ${ms("t.created_at")} AS created_at, t.version${note("t", "created")}`;

    this.get = `SELECT ${cols("t")} FROM ${T} AS t WHERE t.id = $1 AND ${SCOPE} AND ${LIVE}`;
    this.statusOf = `SELECT t.status FROM ${T} AS t WHERE t.id = $1 AND ${SCOPE} AND ${LIVE}`;

    const update = (set: string, kind: TaskChangeKind, extraWhere = "", omit: string[] = []) =>
      `UPDATE ${T} AS t
  SET ${set}, updated_at = n.now, version = t.version + 1
  FROM (SELECT ${nowOf("$4")} AS now) AS n
  WHERE t.id = $1 AND ${SCOPE} AND t.status IN ${ACTIVE}${extraWhere}
  RETURNING ${cols("t", omit)}${note("t", kind)}`;

    // Terminal transitions: $5 result, $6 error, $7 status message. The lease ends with the task.
    const terminal = (status: string, extraSet = "") =>
      update(
        `status = '${status}', result = $5::text::jsonb, error = $6::text::jsonb, status_message = $7::text,
    expires_at = ${EXPIRY}, input_requests = '{}'::jsonb, lease_holder = NULL, lease_expires_at = NULL${extraSet}`,
        "status_changed",
        "",
        TERMINAL_KNOWN,
      );
    this.complete = terminal("completed");
    this.fail = terminal("failed");
    // Cancelling implies the request: an immediate cancel records both in one write.
    this.markCancelled = terminal(
      "cancelled",
      ", cancel_requested_at = coalesce(t.cancel_requested_at, n.now)",
    );

    // $5 requests (an object), $6 whether to set the message, $7 the message. Keys must be new
    // to the whole ledger: outstanding, received and answered keys are all refused.
    this.requireInput = update(
      `status = 'input_required', input_requests = t.input_requests || $5::text::jsonb,
    status_message = CASE WHEN $6::boolean THEN $7::text ELSE t.status_message END`,
      "input_requested",
      ` AND NOT jsonb_exists_any(t.input_requests, ARRAY(SELECT jsonb_object_keys($5::text::jsonb)))
    AND NOT jsonb_exists_any(t.input_responses, ARRAY(SELECT jsonb_object_keys($5::text::jsonb)))
    AND NOT jsonb_exists_any(t.answered_input_keys, ARRAY(SELECT jsonb_object_keys($5::text::jsonb)))`,
    );

    // $5 the message.
    this.setStatusMessage = update("status_message = $5::text", "status_message");

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

    // $5 responses (an object), $6 their keys in the caller's order (a JSON array). The row is
    // locked first, so the accepted keys are computed from the version being updated.
    this.submitInput = `WITH cur AS (
  SELECT t.id, t.input_requests FROM ${T} AS t
  WHERE t.id = $1 AND ${SCOPE} AND t.status IN ${ACTIVE} FOR UPDATE
), acc AS (
  SELECT cur.id,
    coalesce((SELECT jsonb_agg(e.k ORDER BY e.o)
      FROM jsonb_array_elements_text($6::text::jsonb) WITH ORDINALITY AS e(k, o)
      WHERE jsonb_exists(cur.input_requests, e.k)), '[]'::jsonb) AS keys,
    cur.input_requests - ARRAY(SELECT jsonb_array_elements_text($6::text::jsonb)) AS pending
  FROM cur
), u AS (
  UPDATE ${T} AS t SET
    status = CASE WHEN acc.pending = '{}'::jsonb THEN 'working' ELSE t.status END,
    input_requests = acc.pending,
    input_responses = t.input_responses ||
      (SELECT jsonb_object_agg(k.value, $5::text::jsonb -> k.value) FROM jsonb_array_elements_text(acc.keys) AS k),
    answered_input_keys = t.answered_input_keys || acc.keys,
    updated_at = n.now, version = t.version + 1
  FROM acc, (SELECT ${nowOf("$4")} AS now) AS n
  WHERE t.id = acc.id AND jsonb_array_length(acc.keys) > 0
  RETURNING acc.keys AS accepted, ${cols("t")}
) SELECT true AS changed, u.*${note("u", "input_submitted")} FROM u
UNION ALL ${orCurrent(", '[]'::jsonb AS accepted")}`;

    // Draining is the worker's bookkeeping: the version moves, lastUpdatedAt does not.
    this.takeInput = `WITH cur AS (
  SELECT t.id, t.input_responses FROM ${T} AS t
  WHERE t.id = $1 AND ${SCOPE} AND ${LIVE} FOR UPDATE
), u AS (
  UPDATE ${T} AS t SET input_responses = '{}'::jsonb, version = t.version + 1
  FROM cur WHERE t.id = cur.id AND cur.input_responses <> '{}'::jsonb
  RETURNING cur.input_responses AS taken, ${cols("t")}
) SELECT true AS changed, u.*${note("u", "input_taken")} FROM u
UNION ALL ${orCurrent(", '{}'::jsonb AS taken")}`;

    this.delete = `WITH d AS (
  DELETE FROM ${T} AS t WHERE t.id = $1 AND ${SCOPE} AND ${LIVE}
  RETURNING t.id, t.status, t.version
) SELECT d.*${note("d", "deleted")} FROM d`;

    // $1 now, $2 batch size. SKIP LOCKED: concurrent sweepers take disjoint batches.
    this.cleanup = `WITH d AS (
  DELETE FROM ${T} AS t WHERE t.id IN (
    SELECT x.id FROM ${T} AS x WHERE x.expires_at <= ${nowOf("$1")}
    ORDER BY x.expires_at LIMIT $2::bigint FOR UPDATE SKIP LOCKED)
  RETURNING t.id, t.status, t.version
) SELECT d.*${note("d", "deleted")} FROM d`;

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

    // $5 holder, $6 duration in ms. Leases are bookkeeping: no version bump, no event.
    this.renewLease = `UPDATE ${T} AS t SET lease_holder = $5::text,
    lease_expires_at = n.now + $6::float8 * interval '1 millisecond'
  FROM (SELECT ${nowOf("$4")} AS now) AS n
  WHERE t.id = $1 AND ${SCOPE} AND t.status IN ${ACTIVE}
    AND (t.lease_holder IS NULL OR t.lease_holder = $5::text)
  RETURNING t.id`;
    // Released means expired now, so any node's orphan sweep picks the task up.
    this.releaseLease = `UPDATE ${T} AS t SET lease_holder = NULL, lease_expires_at = n.now
  FROM (SELECT ${nowOf("$4")} AS now) AS n
  WHERE t.id = $1 AND ${SCOPE} AND t.status IN ${ACTIVE} AND t.lease_holder = $5::text`;

    // $1 now, $2 batch size, $3 error, $4 message.
    this.failOrphans = `WITH o AS (
  SELECT x.id FROM ${T} AS x
  WHERE x.status IN ${ACTIVE} AND x.lease_expires_at IS NOT NULL AND x.lease_expires_at <= ${nowOf("$1")}
  ORDER BY x.lease_expires_at LIMIT $2::bigint FOR UPDATE SKIP LOCKED
), u AS (
  UPDATE ${T} AS t SET status = 'failed', result = NULL, error = $3::text::jsonb,
    status_message = $4::text, updated_at = n.now, expires_at = ${EXPIRY},
    input_requests = '{}'::jsonb, version = t.version + 1, lease_holder = NULL, lease_expires_at = NULL
  FROM o, (SELECT ${nowOf("$1")} AS now) AS n
  WHERE t.id = o.id AND t.status IN ${ACTIVE}
  RETURNING t.id, t.status, t.version
) SELECT u.*${note("u", "status_changed")} FROM u`;
  }
}
