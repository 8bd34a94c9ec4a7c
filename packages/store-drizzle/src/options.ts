import type { Clock } from "@mcp-tasks/core";
import type { Executor } from "./executor.js";
import {
  channelName,
  checkSchemaName,
  DEFAULT_SCHEMA,
  qualifiedTable,
  qualifiedUsageTable,
} from "./names.js";
import type { Bounds } from "./plans/context.js";

/*
 * The store's options, their defaults and bounds, resolved once when a store opens, and the
 * fixed bounds of the store's own loops.
 */

/** How a store announces changes to other nodes; see the README. */
export type NotifyMode = "after-commit" | "in-transaction";

/** Settings shared by the PostgreSQL and the PGlite store. */
export interface DrizzleTaskStoreOptions {
  /** The schema holding the task table (run `migrate` with the same one); default `public`. */
  readonly schema?: string;
  /**
   * Time source for timestamps, expiry and leases. When absent (the normal case) the
   * database clock is used, so clock skew between nodes cannot expire a task early.
   */
  readonly clock?: Clock;
  /** Largest page `list` returns; default 100. */
  readonly maxPageSize?: number;
  /**
   * Most live tasks in the table; default unlimited. Checked inside the insert statement:
   * concurrent creates may overshoot by up to the number in flight (see the README).
   */
  readonly maxTasks?: number | null;
  /** Most live tasks per owner; default unlimited. The same caveat as `maxTasks`. */
  readonly maxTasksPerOwner?: number | null;
  /**
   * Most payload bytes one owner's live tasks may hold (arguments, results and errors, input
   * answers: core's `taskPayloadBytes`); default unlimited. New arguments and answers past it
   * are refused with `store_full` by the writing statement itself; a run's outcome is always
   * kept, and counted. The same caveat as `maxTasks` for concurrent writers.
   */
  readonly maxBytesPerOwner?: number | null;
  /**
   * `after-commit` (PostgreSQL default): NOTIFY in a batch right after the write commits.
   * `in-transaction` (PGlite default): NOTIFY inside each write statement, atomically with
   * it, at the cost of serialising commits on PostgreSQL.
   */
  readonly notify?: NotifyMode;
  /** A call with no answer after this long fails with `store_unavailable`; default 10 000. */
  readonly operationTimeoutMs?: number;
  /**
   * For this long (ms) after the PostgreSQL server started, `recoverOrphans` takes no task
   * over; default 5 000, 0 for none. While the server was away (a restart) no worker could
   * renew its leases, so leases run out then, or just after, belong to runs that are alive
   * and retrying: they renew, or store their outcome, before another node could re-run
   * their task, and a restart costs no attempt. A dead worker's task is recovered at most
   * this much later. Measured on the server's own clock (`pg_postmaster_start_time()`);
   * not used on PGlite (in process: it starts with its only node) or with `clock`.
   */
  readonly restartGraceMs?: number;
}

/** The longest ttl stored: expiry must stay inside PostgreSQL's timestamp range. */
export const MAX_TTL_MS = 100 * 365 * 24 * 60 * 60 * 1000;

/** `operationTimeoutMs` by default. */
export const DEFAULT_OPERATION_TIMEOUT_MS = 10_000;

/** `maxPageSize` by default. */
const DEFAULT_MAX_PAGE_SIZE = 100;

/** `restartGraceMs` by default: a few renewal retries of a worker whose pool reconnects. */
const DEFAULT_RESTART_GRACE_MS = 5_000;

/** Most rows one sweep statement (cleanup, reclaim, orphan recovery) takes. */
export const SWEEP_BATCH = 500;

/**
 * Most tries of one write that the counters refuse or a concurrent writer races: each try
 * after the first follows a reclaim of expired rows that freed some, or a sign that room was
 * made.
 */
export const MAX_WRITE_TRIES = 6;

/** One store's options, checked and with their defaults. */
export interface StoreSettings {
  readonly schema: string;
  /** The task table and the usage counters' table, schema-qualified. */
  readonly table: string;
  readonly usageTable: string;
  /** The LISTEN/NOTIFY channel. */
  readonly channel: string;
  readonly clock: Clock | null;
  readonly maxPageSize: number;
  readonly bounds: Bounds;
  readonly timeoutMs: number;
  /** 0 where it does not apply (PGlite, an injected clock). */
  readonly restartGraceMs: number;
  /** Whether the writing statements NOTIFY themselves (else batches after commit). */
  readonly notifyInTransaction: boolean;
}

/**
 * Checks `options` and fills in the defaults. `afterCommit`: whether the backend can send
 * notification batches after commit (else they go in the writing statements).
 */
export function resolveSettings(
  options: DrizzleTaskStoreOptions,
  kind: Executor["kind"],
  afterCommit: boolean,
  defaultNotify: NotifyMode,
): StoreSettings {
  const schema = checkSchemaName(options.schema ?? DEFAULT_SCHEMA);
  const clock = options.clock ?? null;
  const maxPageSize = Math.max(1, Math.floor(options.maxPageSize ?? DEFAULT_MAX_PAGE_SIZE));
  const bounds: Bounds = {
    maxTasks: checkBound(options.maxTasks, "maxTasks"),
    maxTasksPerOwner: checkBound(options.maxTasksPerOwner, "maxTasksPerOwner"),
    maxBytesPerOwner: checkBound(options.maxBytesPerOwner, "maxBytesPerOwner"),
  };
  const mode = options.notify ?? defaultNotify;
  return {
    schema,
    table: qualifiedTable(schema),
    usageTable: qualifiedUsageTable(schema),
    channel: channelName(schema),
    clock,
    maxPageSize,
    bounds,
    timeoutMs: options.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS,
    restartGraceMs:
      clock === null && kind !== "pglite"
        ? checkGrace(options.restartGraceMs ?? DEFAULT_RESTART_GRACE_MS)
        : 0,
    notifyInTransaction: mode === "in-transaction" || !afterCommit,
  };
}

/** `restartGraceMs`: a whole number of ms written into the recovery statement. */
function checkGrace(ms: number): number {
  if (!Number.isSafeInteger(ms) || ms < 0) {
    throw new TypeError(`restartGraceMs must be a non-negative whole number, got ${ms}`);
  }
  return ms;
}

/** A bound option: a whole number written into the statements, or `null` for none. */
function checkBound(value: number | null | undefined, name: string): number | null {
  if (value === undefined || value === null || value === Number.POSITIVE_INFINITY) return null;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(`${name} must be a non-negative whole number or null, got ${value}`);
  }
  return value;
}
