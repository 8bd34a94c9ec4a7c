import type { TaskStatus } from "@mcp-tasks/core";
import type { Row } from "../executor.js";
import { bumpUsage, type Notes, type PlanContext } from "./context.js";
import { ACTIVE, cols, nowOf } from "./fragments.js";
import { plan } from "./plan.js";
import { TERMINAL_SETS } from "./terminal-effects.js";

/** How a run (or a cancel) ends a task: the columns of one `settle` row. */
export interface Outcome {
  readonly status: "completed" | "failed" | "cancelled";
  /** The result or the error as JSON text, or null. */
  readonly result: string | null;
  readonly error: string | null;
  readonly statusMessage: string | null;
  /** The outcome's payload bytes (added to the owner's usage). */
  readonly bytes: number;
}

/** One task to settle: which, in what scope (its stored owner key) and fence, and how. */
export interface SettleRow {
  readonly taskId: string;
  readonly ownerKey: string;
  readonly includeUnowned: boolean;
  /** The fence of the run that ends it, or null (a cancel). */
  readonly fence: { readonly holder: string; readonly fencingToken: number } | null;
  readonly outcome: Outcome;
}

/** The input of `settle`. */
export interface SettleInput {
  readonly now: number | null;
  /** The rows, a JSON array (see {@link settleBatchJson}). */
  readonly outcomes: string;
}

/**
 * The columns a terminal transition does not return: it has just written them from its own
 * parameters (or constants), so the store fills them in ({@link terminalKnown}), which
 * spares the database and the driver a third of the row, jsonb included.
 */
const TERMINAL_KNOWN = [
  "status",
  "status_message",
  "result",
  "error",
  "input_requests",
  "lease_holder",
  "lease_expires_at",
  "available_at",
];

/**
 * `settle`'s `outcomes`: each row with `i` its position in the batch, `id`, `o` the scope's
 * owner key, `u` whether the scope includes unowned tasks, `h` and `f` the fence's holder
 * and token (or null), `s` the status, `r` result, `e` error, `m` status message, `b` the
 * outcome's payload bytes. The result and error are JSON text already, so they go in as
 * they are instead of being parsed and serialised again.
 */
export function settleBatchJson(rows: readonly SettleRow[]): string {
  const json = rows.map(({ taskId, ownerKey, includeUnowned, fence, outcome: o }, i) => {
    return `{"i":${i},"id":${JSON.stringify(taskId)},"o":${JSON.stringify(ownerKey)},"u":${includeUnowned},"h":${fence === null ? "null" : JSON.stringify(fence.holder)},"f":${fence === null ? "null" : fence.fencingToken},"s":"${o.status}","r":${o.result ?? "null"},"e":${o.error ?? "null"},"m":${JSON.stringify(o.statusMessage)},"b":${o.bytes}}`;
  });
  return `[${json.join(",")}]`;
}

/** The columns of a settled row that `settle` wrote and does not return. */
export function terminalKnown(outcome: Outcome): Row {
  return {
    status: outcome.status as TaskStatus,
    status_message: outcome.statusMessage,
    result: outcome.result === null ? null : JSON.parse(outcome.result),
    error: outcome.error === null ? null : JSON.parse(outcome.error),
    input_requests: {},
    // The run's lease ends with the task.
    lease_holder: null,
    lease_expires_at: null,
    available_at: null,
  };
}

/**
 * Terminal transitions, many tasks in one statement (the store batches them; see
 * `settle-batching.ts`). Each row has its own scope and fence; a row that does not apply
 * returns nothing and the store asks why. No run holds the task any more: the lease ends
 * with it. Cancelling implies the request: an immediate cancel records both in one write.
 * The ids also reach the table as an array, so the rows are found through the primary key
 * whatever the planner makes of the JSON. The outcome's bytes (never refused: a run's
 * outcome is kept, and counted) are added to the owner's usage counters in the same
 * statement. Returns `i`, the row's position in the batch.
 */
export function settlePlans({ table: T, usageTable: U }: PlanContext, note: Notes) {
  return {
    settle: plan<SettleInput>(
      ["now", "outcomes"],
      (p) => `WITH u AS (
  UPDATE ${T} AS t
  SET status = v.s, result = v.r, error = v.e, status_message = v.m,
    payload_bytes = t.payload_bytes + v.b,
    ${TERMINAL_SETS},
    cancel_requested_at = CASE WHEN v.s = 'cancelled' THEN coalesce(t.cancel_requested_at, n.now)
      ELSE t.cancel_requested_at END,
    updated_at = n.now, version = t.version + 1
  FROM jsonb_to_recordset(${p.outcomes}::text::jsonb)
      AS v(i integer, id text, o text, u boolean, h text, f integer, s text, r jsonb, e jsonb, m text, b bigint),
    (SELECT ${nowOf(p.now)} AS now) AS n
  WHERE t.id = ANY(ARRAY(SELECT x ->> 'id' FROM jsonb_array_elements(${p.outcomes}::text::jsonb) AS x))
    AND t.id = v.id AND (t.owner_key = v.o OR (v.u AND t.owner_key = ''))
    AND t.status IN ${ACTIVE} AND (v.h IS NULL OR (t.lease_holder = v.h AND t.fencing_token = v.f))
  RETURNING v.i, v.b AS added_bytes, t.owner_key AS usage_key, ${cols("t", TERMINAL_KNOWN)}${note.kinds("t", "status_changed")}
), counted AS (
  ${bumpUsage(U, "SELECT u.id, u.usage_key AS k, 0 AS dt, u.added_bytes AS db FROM u WHERE u.added_bytes <> 0")}
) SELECT u.* FROM u`,
    ),
  };
}
