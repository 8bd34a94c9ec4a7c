import { ACTIVE_STATUSES, INTENT_FROM } from "@mcp-tasks/core/store";
import type { Placeholders } from "./plan.js";

/*
 * SQL pieces the statement plans share: time, the record's column list, the statuses a
 * write applies from, and the owner scope, liveness and fence conditions of the by-id
 * statements. Each lifecycle operation is ONE statement: a conditional UPDATE (or
 * INSERT/DELETE) whose WHERE clause holds the owner scope and the statuses the operation may
 * start from, so there is no read-modify-write for a concurrent writer to interleave with,
 * and one round trip.
 */

/** `now` from the injected clock when given, else the database clock. */
export const nowOf = (param: string) => `coalesce(to_timestamp(${param}::float8 / 1000), now())`;

/**
 * Milliseconds since the epoch of a timestamptz column, as a JS number. date_part works in
 * float8 (extract would build a numeric and convert it through text); the columns hold whole
 * milliseconds and the float error is far below one, so round() gives them back exactly.
 */
export const ms = (column: string) => `round(date_part('epoch', ${column}) * 1000)`;

/** `ms` interval of a millisecond count. */
export const msInterval = (value: string) => `${value}::float8 * interval '1 millisecond'`;

/** A SQL list of string literals (core's constant names, never user input). */
function sqlList(values: readonly string[]): string {
  return `(${values.map((v) => `'${v.replaceAll("'", "''")}'`).join(", ")})`;
}

/** A text value as an SQL string literal. */
export const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * The statuses the intents apply from, taken from core's table (`INTENT_FROM`) rather than
 * written here again. Every statement uses this one list, so every intent must start from
 * the same statuses: a core change that widens one intent alone is refused here when the
 * module loads, instead of making the store's writes miss and retry.
 */
export const ACTIVE = sqlList(ACTIVE_STATUSES);
for (const [intent, from] of Object.entries(INTENT_FROM)) {
  if (from.length !== ACTIVE_STATUSES.length || from.some((s) => !ACTIVE_STATUSES.includes(s))) {
    throw new Error(
      `store-drizzle applies every intent from ${ACTIVE}; core's INTENT_FROM.${intent} differs`,
    );
  }
}

/** Whether a cancellation was requested for the row `t`. */
export const CANCEL_REQUESTED = "t.cancel_requested_at IS NOT NULL";

/** When a task put back in the queue becomes claimable: after its backoff, if any. */
export const BACKOFF = `CASE WHEN t.backoff_ms > 0 THEN n.now + ${msInterval("t.backoff_ms")} END`;

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
 * The columns a task record is read from (see `mapping.ts`), in a statement where the table
 * is aliased `a`, less those named in `omit` (a statement that wrote them knows them).
 */
export function cols(a: string, omit: readonly string[] = []): string {
  return COLUMNS.filter(([name]) => !omit.includes(name))
    .map(([name, expr]) => {
      const e = expr(a);
      return e === `${a}.${name}` ? e : `${e} AS ${name}`;
    })
    .join(", ");
}

/** The input of a statement about one task, in an owner's scope. */
export interface ById {
  readonly id: string;
  /** The scope's owner key (as stored; see `inputs.ts`). */
  readonly ownerKey: string;
  /** Whether the scope also covers the unowned tasks. */
  readonly includeUnowned: boolean;
  /** The injected clock's time in ms, or null for the database clock. */
  readonly now: number | null;
}
export const BY_ID = ["id", "ownerKey", "includeUnowned", "now"] as const;

/** The input of a run's write: {@link ById}, and the run's fence (null: an unfenced write). */
export interface Fenced extends ById {
  readonly holder: string | null;
  readonly fencingToken: number | null;
}
export const FENCED = [...BY_ID, "holder", "fencingToken"] as const;

/** The row `t` is in the scope. */
export const inScope = (p: Placeholders<ById>) =>
  `(t.owner_key = ${p.ownerKey} OR (${p.includeUnowned}::boolean AND t.owner_key = ''))`;

/** The row `t` has not expired. */
export const live = (p: Placeholders<ById>) =>
  `(t.expires_at IS NULL OR t.expires_at > ${nowOf(p.now)})`;

/**
 * The fence: a run's write applies only while that run (holder and fencing token) still
 * holds the task, tested in the same statement as the rest of the condition.
 */
export const fenceHolds = (p: Placeholders<Fenced>) =>
  `(${p.holder}::text IS NULL OR (t.lease_holder = ${p.holder}::text AND t.fencing_token = ${p.fencingToken}::integer))`;

/**
 * An owner's running tasks as core's `countedRunning` counts them, from the running-owner
 * index: `working` claimed rows plus `input_required` ones beyond `maxWaiting`. Each count
 * stops at what can matter (`maxRunning`, `maxRunning + maxWaiting`), so it reads at most
 * that many index entries; a NULL limit is no limit (and waiting tasks then never count).
 */
export const runningOf = (T: string, key: string, maxRunning: string, maxWaiting: string) =>
  `((SELECT count(*) FROM (SELECT 1 FROM ${T} AS y WHERE y.owner_key = ${key}
      AND y.lease_holder IS NOT NULL AND y.status = 'working' LIMIT ${maxRunning}) AS w)
    + CASE WHEN ${maxWaiting} IS NULL THEN 0 ELSE greatest(0, (SELECT count(*) FROM (
      SELECT 1 FROM ${T} AS y WHERE y.owner_key = ${key} AND y.lease_holder IS NOT NULL
        AND y.status = 'input_required' LIMIT ${maxWaiting} + ${maxRunning}) AS w) - ${maxWaiting}) END)`;
