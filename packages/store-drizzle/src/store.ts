import { createHash } from "node:crypto";
import type {
  ClaimOptions,
  Clock,
  InputRequest,
  InputResponse,
  JsonRpcErrorObject,
  OrphanSweep,
  SubmitInputResult,
  TakeInputResult,
  TaskChange,
  TaskChangeKind,
  TaskChangeListener,
  TaskPage,
  TaskRecord,
  TaskStatus,
  Unsubscribe,
} from "@mcp-tasks/core";
import { extractTraceContext, isTaskError } from "@mcp-tasks/core";
import {
  ACTIVE_STATUSES,
  assertFence,
  assertFreshInputKeys,
  assertIntentAllowed,
  assertStorable,
  CANCELLED_WITHOUT_RUN_MESSAGE,
  ChangeFeed,
  decodeSequenceCursor,
  encodeCursor,
  executionPolicy,
  HANDED_BACK_MESSAGE,
  holdsUnstorableText,
  type Intent,
  type ListQuery,
  type NewestQuery,
  type NewTask,
  type OwnerScope,
  ownerKey,
  payloadBytes,
  retryingMessage,
  type TaskQueueStore,
  taskErrors,
  UNOWNED_KEY,
  type UsageAudit,
  type UsageSnapshot,
  utf8Length,
  validateNewTask,
  validateOwnerLimits,
  WORKER_LOST_ERROR,
} from "@mcp-tasks/core/store";
import { mapDriverError } from "./errors.js";
import type { Executor, Query, Row } from "./executor.js";
import {
  type BatchedNotifier,
  packChanges,
  payloadPrefix,
  type Subscribe,
  unpackChanges,
} from "./feed.js";
import { toRecord } from "./mapping.js";
import {
  channelName,
  checkSchemaName,
  DEFAULT_SCHEMA,
  qualifiedTable,
  qualifiedUsageTable,
} from "./names.js";
import { type RetryTemplate, Statements, TOTAL_KEY } from "./statements.js";
import { WriteBatcher } from "./write-batcher.js";

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

/** What a driver-specific factory hands the store. */
export interface StoreBackend {
  readonly executor: Executor;
  /**
   * Where `get` runs, when not on the executor: postgres.js's small read pool, on which
   * concurrent polls are pipelined (see `readPoolSize`). Every write has returned only after
   * its commit, so a read here sees it as the executor's connections do.
   */
  readonly reads?: Query;
  readonly subscribe: Subscribe;
  /** Sends payloads on the channel, one notification each (after-commit mode). */
  readonly sendNotifications: ((channel: string, payloads: string[]) => Promise<unknown>) | null;
  /** Releases what the factory opened (pools, embedded databases). */
  readonly release: () => Promise<void>;
  readonly createNotifier: (
    send: (changes: TaskChange[]) => Promise<unknown>,
  ) => BatchedNotifier<TaskChange>;
}

/** The longest ttl stored: expiry must stay inside PostgreSQL's timestamp range. */
export const MAX_TTL_MS = 100 * 365 * 24 * 60 * 60 * 1000;

const CLEANUP_BATCH = 500;

/**
 * Most tries of one create (or answer) that the counters refuse: each try after the first
 * follows a reclaim of expired rows that freed some, or a sign that room was made.
 */
const MAX_WRITE_TRIES = 6;

/** The status message of a task handed back to the queue by a stopping worker. */

/** Why an orphan is retried, in core's `retryingMessage`. */
const WORKER_LOST_REASON = "the worker was lost";

/** Core's retry wording with placeholders the recovery statement fills in per row. */
const RETRY_TEMPLATE: RetryTemplate = (() => {
  const nextAttempt = 987_654_321;
  const maxAttempts = 123_456_789;
  return {
    text: retryingMessage(WORKER_LOST_REASON, nextAttempt, maxAttempts),
    nextAttempt: String(nextAttempt),
    maxAttempts: String(maxAttempts),
  };
})();

/** A task given back to the queue is `queued`; one that ended instead (a cancel request) changed status. */
function requeuedOrEnded(status: TaskStatus): TaskChangeKind {
  return status === "working" || status === "input_required" ? "queued" : "status_changed";
}

/** The payload bytes of the error an orphan without attempts left is failed with. */
const WORKER_LOST_BYTES = payloadBytes(WORKER_LOST_ERROR);

/** `restartGraceMs` by default: a few renewal retries of a worker whose pool reconnects. */
const DEFAULT_RESTART_GRACE_MS = 5_000;

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

/** The largest value of an `integer` column (the backoff). */
const MAX_INT4 = 2_147_483_647;

function toJson(value: unknown, what: string): string {
  try {
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError("not JSON");
    return text;
  } catch (error) {
    throw taskErrors.invalidTask(`${what} is not JSON-serialisable (${(error as Error).message})`);
  }
}

/**
 * The owner key sent to PostgreSQL. A key holding U+0000 (which no text column holds, and
 * core's rule refuses at creation) owns no task: it goes as a key no owner has (real keys
 * start with a digit, `~` or nothing), so the caller still sees what the memory store
 * shows it, the unowned tasks its scope includes, and the database sees no bad text.
 */
function storedKey(scope: OwnerScope): string {
  return holdsUnstorableText(scope.ownerKey) ? "!unstorable" : scope.ownerKey;
}

/** A task id holding U+0000 names no task (none was ever created with one). */
function storableId(taskId: string): string {
  const id = String(taskId);
  if (holdsUnstorableText(id)) throw taskErrors.notFound(id);
  return id;
}

/** Whether a listing in `scope` merges in the unowned tasks (a second ordered scan). */
function alsoUnowned(scope: OwnerScope): boolean {
  return scope.includeUnowned && scope.ownerKey !== UNOWNED_KEY;
}

function positiveLimit(limit: number | undefined, fallback: number): number {
  if (limit === undefined) return fallback;
  if (!Number.isFinite(limit) || limit <= 0) return 0;
  return Math.floor(limit);
}

/**
 * The PostgreSQL task store, for a PostgreSQL server (postgres.js or node-postgres) or an
 * embedded PGlite, from the same schema and statements. Every lifecycle operation is one conditional
 * statement and one round trip; a failed one costs one more read to say why. Implements
 * {@link TaskQueueStore}: the task table is the queue, and the writes of a run carry its
 * fence into the same conditional statement. Open one with `createPostgresTaskStore`,
 * `createPGliteTaskStore`, or `createTaskStore` on a connection you have (any driver, or a
 * Drizzle database).
 */
export class DrizzleTaskStore implements TaskQueueStore {
  readonly schema: string;
  readonly #backend: StoreBackend;
  readonly #exec: Executor;
  readonly #reads: Query;
  readonly #clock: Clock | null;
  readonly #maxPageSize: number;
  readonly #maxTasks: number | null;
  readonly #maxTasksPerOwner: number | null;
  readonly #maxBytesPerOwner: number | null;
  readonly #timeoutMs: number;
  readonly #sql: Statements;
  readonly #table: string;
  /** {@link #lockedPrefix}'s scripts, by statement text (a handful: claims and creates). */
  readonly #lockedPrefixes = new Map<string, string>();
  readonly #channel: string;
  readonly #origin: string;
  /** How this store's own notifications start (skipped unread when they come back). */
  readonly #ownPrefix: string;
  readonly #feed = new ChangeFeed();
  readonly #pending: TaskChange[] = [];
  readonly #notifier: BatchedNotifier<TaskChange> | null;
  /** Terminal transitions of the same moment, one statement per batch. */
  readonly #settles: WriteBatcher<Settle, Row | undefined>;
  /** Creates of the same moment, one statement per batch (group commit). */
  readonly #creates: WriteBatcher<Create, Row | undefined>;
  /** Creates that may claim under a running limit, grouped likewise (under the claim lock). */
  readonly #lockedCreates: WriteBatcher<Create, Row | undefined>;
  #unlisten: (() => Promise<void>) | null = null;
  #closed = false;

  /** Made by the factories (`createTaskStore`, …), which call {@link start}. */
  constructor(backend: StoreBackend, options: DrizzleTaskStoreOptions, defaultNotify: NotifyMode) {
    this.schema = checkSchemaName(options.schema ?? DEFAULT_SCHEMA);
    this.#backend = backend;
    this.#exec = backend.executor;
    this.#reads = backend.reads ?? backend.executor.query;
    this.#clock = options.clock ?? null;
    this.#maxPageSize = Math.max(1, Math.floor(options.maxPageSize ?? 100));
    this.#maxTasks = checkBound(options.maxTasks, "maxTasks");
    this.#maxTasksPerOwner = checkBound(options.maxTasksPerOwner, "maxTasksPerOwner");
    this.#maxBytesPerOwner = checkBound(options.maxBytesPerOwner, "maxBytesPerOwner");
    this.#timeoutMs = options.operationTimeoutMs ?? 10_000;
    this.#settles = new WriteBatcher<Settle, Row | undefined>((batch) => this.#sendSettles(batch), {
      // Sent again one by one only when the database answered (refused the batch).
      isolate: (error) => !isTaskError(error, "store_unavailable"),
      // Like any statement, a write waits for PostgreSQL at most operationTimeoutMs, also
      // when it waits behind batches PostgreSQL is slow to answer.
      maxQueuedMs: this.#timeoutMs,
      expired: () =>
        taskErrors.storeUnavailable(
          `an outcome waited more than ${this.#timeoutMs} ms for PostgreSQL to take it`,
        ),
    });
    this.#creates = new WriteBatcher<Create, Row | undefined>(
      (batch) => this.#sendCreates(batch, false),
      {
        // Sent again one by one only when the database answered (refused the batch).
        isolate: (error) => !isTaskError(error, "store_unavailable"),
        maxQueuedMs: this.#timeoutMs,
        expired: () =>
          taskErrors.storeUnavailable(
            `a create waited more than ${this.#timeoutMs} ms for PostgreSQL to take it`,
          ),
      },
    );
    // Creates that may claim under a running limit: grouped the same way, each batch one
    // statement under the claim lock (see #sendCreates).
    this.#lockedCreates = new WriteBatcher<Create, Row | undefined>(
      (batch) => this.#sendCreates(batch, true),
      {
        isolate: (error) => !isTaskError(error, "store_unavailable"),
        maxQueuedMs: this.#timeoutMs,
        expired: () =>
          taskErrors.storeUnavailable(
            `a create waited more than ${this.#timeoutMs} ms for PostgreSQL to take it`,
          ),
      },
    );
    this.#table = qualifiedTable(this.schema);
    this.#channel = channelName(this.schema);
    this.#origin = Math.random().toString(36).slice(2, 10).padEnd(8, "0");
    this.#ownPrefix = payloadPrefix(this.#origin);
    const mode = options.notify ?? defaultNotify;
    const send = backend.sendNotifications;
    const inTransaction = mode === "in-transaction" || send === null;
    this.#sql = new Statements(
      this.#table,
      qualifiedUsageTable(this.schema),
      { channel: inTransaction ? this.#channel : null, origin: this.#origin },
      {
        maxTasks: this.#maxTasks,
        maxTasksPerOwner: this.#maxTasksPerOwner,
        maxBytesPerOwner: this.#maxBytesPerOwner,
      },
      RETRY_TEMPLATE,
      this.#clock === null && backend.executor.kind !== "pglite"
        ? checkGrace(options.restartGraceMs ?? DEFAULT_RESTART_GRACE_MS)
        : 0,
    );
    this.#notifier =
      inTransaction || send === null
        ? null
        : backend.createNotifier((changes) =>
            send(this.#channel, packChanges(this.#origin, changes)),
          );
  }

  /** Starts listening for other nodes' changes; the factories call it. */
  async start(): Promise<this> {
    try {
      this.#unlisten = await this.#backend.subscribe(this.#channel, (payload) =>
        this.#onNotification(payload),
      );
    } catch (error) {
      await this.#backend.release().catch(() => {});
      throw mapDriverError(error, "listen");
    }
    return this;
  }

  // ---------------------------------------------------------------- reads

  async create(task: NewTask, scope: OwnerScope): Promise<TaskRecord> {
    validateNewTask(task, scope.owner);
    if (task.ttlMs !== null && task.ttlMs > MAX_TTL_MS) {
      throw taskErrors.invalidTask(`ttlMs must be at most ${MAX_TTL_MS} (100 years)`);
    }
    const policy = executionPolicy(task.execution);
    if (policy.backoffMs > MAX_INT4) {
      throw taskErrors.invalidTask(`execution.backoffMs must be at most ${MAX_INT4}`);
    }
    const lease = task.lease;
    if (lease !== undefined) checkHolder(lease.holder, "lease.holder");
    const o = scope.owner;
    const request = toJson(task.request, "request");
    const bytes = payloadBytes(task.request.arguments);
    // A client's bad value is dropped here, never stored and never an error.
    const traceContext = extractTraceContext(task.traceContext);
    const entry: Create = {
      json: createJson(task, scope, request, policy, bytes, traceContext),
      taskId: String(task.taskId),
    };
    // A create that may claim under a running limit is serialised with the claims (under the
    // claim lock, with the others of its moment): its count of the owner's running tasks is
    // then exact across nodes.
    const locked = lease !== undefined && task.ownerLimits?.maxRunningPerOwner !== undefined;
    for (let attempt = 0; attempt < MAX_WRITE_TRIES; attempt++) {
      const row = await (locked ? this.#lockedCreates : this.#creates).submit(entry);
      if (row !== undefined) {
        const holder = (row.lease_holder as string | null) ?? null;
        // The statement returns only the database's part; the rest is what went in.
        const createdAt = Number(row.created_at);
        const record: TaskRecord = {
          taskId: task.taskId,
          status: "working",
          statusMessage: (row.status_message as string | null) ?? null,
          createdAt,
          lastUpdatedAt: createdAt,
          ttlMs: task.ttlMs ?? null,
          ttlAnchor: task.ttlAnchor,
          expiresAt: null,
          pollIntervalMs: task.pollIntervalMs ?? null,
          owner: {
            principalId: o.principalId ?? null,
            tenantId: o.tenantId ?? null,
            audience: o.audience ?? null,
          },
          era: task.era,
          // A copy, as a read would give: the caller's object stays the caller's.
          request: JSON.parse(request),
          outcome: null,
          inputRequests: {},
          inputResponses: {},
          answeredInputKeys: [],
          inputAnswers: {},
          cancelRequestedAt: null,
          execution: {
            ...policy,
            attempt: holder === null ? 0 : 1,
            holder,
            fencingToken: holder === null ? 0 : 1,
            leaseExpiresAt: holder === null ? null : Number(row.lease_expires_at),
            availableAt: null,
          },
          traceContext,
          version: Number(row.version),
        };
        this.#changed(record, "created");
        // Without a holder the task is in the queue, for any worker to claim.
        if (holder === null) this.#changed(record, "queued");
        return record;
      }
      // Nothing inserted: the id is taken, or the counters say a bound is reached. One read
      // says which.
      const why = await this.#run("create", this.#sql.createRefusal, [task.taskId, scope.ownerKey]);
      const r = why[0]!;
      if (r.taken === true) throw taskErrors.alreadyExists(task.taskId);
      const total = this.#maxTasks !== null && Number(r.total) >= this.#maxTasks;
      const own = this.#maxTasksPerOwner !== null && Number(r.own) >= this.#maxTasksPerOwner;
      const ownBytes =
        this.#maxBytesPerOwner !== null && Number(r.own_bytes) + bytes > this.#maxBytesPerOwner;
      // No bound reached: room was made in between (a delete or an expiry), or the row was
      // refused with the rows before it in its batch. Try again.
      if (!(total || own || ownBytes)) continue;
      // The counters include expired rows not yet removed: remove those involved (a bounded
      // batch), then look again. Refused only when there were none.
      const reclaimed =
        (total ? await this.#reclaim(null) : 0) +
        (own || ownBytes ? await this.#reclaim(scope.ownerKey) : 0);
      if (reclaimed > 0) continue;
      if (total) throw taskErrors.storeFull("maxTasks", this.#maxTasks!);
      if (own) throw taskErrors.storeFull("maxTasksPerOwner", this.#maxTasksPerOwner!);
      throw taskErrors.storeFull("maxBytesPerOwner", this.#maxBytesPerOwner!);
    }
    throw taskErrors.storeUnavailable("create kept racing with concurrent writers; try again");
  }

  async get(taskId: string, scope: OwnerScope): Promise<TaskRecord> {
    const rows = await this.#run("get", this.#sql.get, this.#byId(taskId, scope), this.#reads);
    if (rows[0] === undefined) throw taskErrors.notFound(taskId);
    return toRecord(rows[0]);
  }

  async list(scope: OwnerScope, query: ListQuery): Promise<TaskPage> {
    const after = query.cursor === undefined ? 0 : decodeSequenceCursor(query.cursor);
    const { limit, statuses } = this.#pageParams(query);
    const text = alsoUnowned(scope) ? this.#sql.listWithUnowned : this.#sql.listOwn;
    const rows = await this.#run("list", text, [
      storedKey(scope),
      after,
      this.#now(),
      statuses,
      limit + 1,
    ]);
    return this.#page(rows, limit);
  }

  async listNewest(scope: OwnerScope, query: NewestQuery): Promise<TaskPage> {
    const { before, limit, statuses, tools } = this.#newestParams(query);
    const text = alsoUnowned(scope) ? this.#sql.listNewestWithUnowned : this.#sql.listNewestOwn;
    const rows = await this.#run("listNewest", text, [
      storedKey(scope),
      before,
      this.#now(),
      statuses,
      limit + 1,
      tools,
    ]);
    return this.#page(rows, limit);
  }

  async listNewestAcrossOwners(query: NewestQuery): Promise<TaskPage> {
    const { before, limit, statuses, tools } = this.#newestParams(query);
    const rows = await this.#run("listNewestAcrossOwners", this.#sql.listNewestAcrossOwners, [
      before,
      this.#now(),
      statuses,
      limit + 1,
      tools,
    ]);
    return this.#page(rows, limit);
  }

  async getAcrossOwners(taskId: string): Promise<TaskRecord> {
    const rows = await this.#run("getAcrossOwners", this.#sql.getAcrossOwners, [
      storableId(taskId),
      this.#now(),
    ]);
    if (rows[0] === undefined) throw taskErrors.notFound(taskId);
    return toRecord(rows[0]);
  }

  /** A page's size (at most `maxPageSize`) and its status filter, as the statements take them. */
  #pageParams(query: ListQuery) {
    return {
      limit: Math.max(1, Math.min(Math.floor(query.limit) || 1, this.#maxPageSize)),
      statuses: query.statuses && query.statuses.length > 0 ? query.statuses.join(",") : null,
    };
  }

  #newestParams(query: NewestQuery) {
    return {
      ...this.#pageParams(query),
      // Past every bigint identity value the table will hand out.
      before:
        query.cursor === undefined ? Number.MAX_SAFE_INTEGER : decodeSequenceCursor(query.cursor),
      tools: query.toolNames && query.toolNames.length > 0 ? JSON.stringify(query.toolNames) : null,
    };
  }

  /** The first `limit` rows (the statements fetch one more) and the cursor past them, if any. */
  #page(rows: readonly Row[], limit: number): TaskPage {
    const page = rows.slice(0, limit);
    const tasks = page.map(toRecord);
    if (rows.length <= limit) return { tasks };
    return { tasks, nextCursor: encodeCursor(Number(page[page.length - 1]!.seq)) };
  }

  // ---------------------------------------------------------------- transitions

  async complete(
    taskId: string,
    scope: OwnerScope,
    result: Readonly<Record<string, unknown>>,
    statusMessage: string | null = null,
  ): Promise<TaskRecord> {
    assertStorable("the result", result);
    assertStorable("the status message", statusMessage);
    const text = toJson(result, "result");
    return this.#settle("complete", taskId, scope, {
      status: "completed",
      result: text,
      error: null,
      statusMessage,
      bytes: utf8Length(text),
    });
  }

  async fail(
    taskId: string,
    scope: OwnerScope,
    error: JsonRpcErrorObject,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    assertStorable("the error", error);
    assertStorable("the status message", statusMessage);
    const text = toJson(error, "error");
    return this.#settle("fail", taskId, scope, {
      status: "failed",
      result: null,
      error: text,
      statusMessage: statusMessage === undefined ? (error?.message ?? null) : statusMessage,
      bytes: utf8Length(text),
    });
  }

  async markCancelled(
    taskId: string,
    scope: OwnerScope,
    statusMessage: string | null = "The task was cancelled by request.",
  ): Promise<TaskRecord> {
    assertStorable("the status message", statusMessage);
    return this.#settle("markCancelled", taskId, scope, {
      status: "cancelled",
      result: null,
      error: null,
      statusMessage,
      bytes: 0,
    });
  }

  async requireInput(
    taskId: string,
    scope: OwnerScope,
    requests: Readonly<Record<string, InputRequest>>,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    assertStorable("the input requests", requests);
    assertStorable("the status message", statusMessage);
    const params = [
      toJson(requests, "input requests"),
      statusMessage !== undefined,
      statusMessage ?? null,
    ];
    try {
      // The batch's own shape (empty, key length, method) is checked before any write.
      assertFreshInputKeys(NO_INPUT, requests);
    } catch (error) {
      await this.#explainMiss(taskId, scope, "requireInput");
      throw error;
    }
    return this.#transition(
      "requireInput",
      () => this.#writeOne("requireInput", this.#sql.requireInput, taskId, scope, params),
      taskId,
      scope,
      "input_requested",
      (task) => assertFreshInputKeys(task, requests),
    );
  }

  async setStatusMessage(
    taskId: string,
    scope: OwnerScope,
    statusMessage: string | null,
  ): Promise<TaskRecord> {
    assertStorable("the status message", statusMessage);
    return this.#transition(
      "setStatusMessage",
      () =>
        this.#writeOne("setStatusMessage", this.#sql.setStatusMessage, taskId, scope, [
          statusMessage,
        ]),
      taskId,
      scope,
      "status_message",
    );
  }

  async requestCancel(taskId: string, scope: OwnerScope): Promise<TaskRecord> {
    const rows = await this.#run(
      "requestCancel",
      this.#sql.requestCancel,
      this.#byId(taskId, scope),
    );
    const row = rows[0];
    if (row === undefined) throw taskErrors.notFound(taskId);
    const record = toRecord(row);
    if (row.changed === true) return this.#changed(record, "cancel_requested");
    // Lost a race with a concurrent writer: the snapshot may predate its change.
    if (ACTIVE_STATUSES.includes(record.status) && record.cancelRequestedAt === null) {
      return this.get(taskId, scope);
    }
    return record;
  }

  async submitInput(
    taskId: string,
    scope: OwnerScope,
    responses: Readonly<Record<string, InputResponse>>,
  ): Promise<SubmitInputResult> {
    assertStorable("the input responses", responses);
    const keys = Object.keys(responses ?? {});
    // Each answer's bytes, measured here as core measures them (the statement adds those of
    // the keys it accepts).
    const sizes: Record<string, number> = {};
    for (const key of keys) sizes[key] = payloadBytes(responses[key]);
    const params = [
      ...this.#byId(taskId, scope),
      toJson(responses ?? {}, "input responses"),
      JSON.stringify(keys),
      JSON.stringify(sizes),
    ];
    for (let attempt = 0; attempt < MAX_WRITE_TRIES; attempt++) {
      const rows = await this.#run("submitInput", this.#sql.submitInput, params);
      const row = rows[0];
      if (row === undefined) throw taskErrors.notFound(taskId);
      const task = toRecord(row);
      if (row.over_quota === true && this.#maxBytesPerOwner !== null) {
        // The counters include the owner's expired rows not yet removed: remove them (a
        // bounded batch) and try again; refused only when there were none.
        if ((await this.#reclaim(ownerKey(task.owner))) > 0) continue;
        throw taskErrors.storeFull("maxBytesPerOwner", this.#maxBytesPerOwner);
      }
      if (row.changed !== true) return { task, acceptedKeys: [] };
      this.#changed(task, "input_submitted");
      return { task, acceptedKeys: row.accepted as string[] };
    }
    throw taskErrors.storeUnavailable("submitInput kept racing with concurrent writers; try again");
  }

  async takeInputResponses(taskId: string, scope: OwnerScope): Promise<TakeInputResult> {
    const rows = await this.#run(
      "takeInputResponses",
      this.#sql.takeInput,
      this.#fenced(taskId, scope),
    );
    const row = rows[0];
    if (row === undefined) throw taskErrors.notFound(taskId);
    const task = toRecord(row);
    if (row.changed !== true) {
      // Nothing drained: nothing was there, or the fence did not hold.
      assertFence(task, scope.fence);
      return { task: { ...task, inputResponses: {} }, responses: {} };
    }
    this.#changed(task, "input_taken");
    return { task, responses: row.taken as Record<string, InputResponse> };
  }

  async delete(taskId: string, scope: OwnerScope): Promise<void> {
    const rows = await this.#run("delete", this.#sql.delete, this.#byId(taskId, scope));
    const row = rows[0];
    if (row === undefined) throw taskErrors.notFound(taskId);
    this.#emitRow(row, "deleted");
  }

  async cleanupExpired(options: { limit?: number } = {}): Promise<number> {
    let left = positiveLimit(options.limit, Number.POSITIVE_INFINITY);
    let removed = 0;
    // Bounded batches, so one sweep never holds many row locks or one long transaction.
    while (left > 0) {
      const batch = Math.min(left, CLEANUP_BATCH);
      const rows = await this.#run("cleanupExpired", this.#sql.cleanup, [this.#now(), batch]);
      for (const row of rows) this.#emitRow(row, "deleted");
      removed += rows.length;
      left -= rows.length;
      if (rows.length < batch) break;
    }
    // Owners whose last tasks went keep no counters.
    if (removed > 0) await this.#run("cleanupExpired", this.#sql.pruneUsage, []);
    return removed;
  }

  /**
   * The quota usage counters next to the same numbers counted from the task table: they
   * agree unless something wrote the table around the store (see the migration's backfill).
   * Both count stored rows, expired ones not yet removed included. A full scan: for tests
   * and audits, not for the hot path.
   */
  async auditUsage(): Promise<UsageAudit> {
    const [counters, recount] = await Promise.all([
      this.#run("auditUsage", this.#sql.usageCounters, []),
      this.#run("auditUsage", this.#sql.usageRecount, []),
    ]);
    return { counters: usageSnapshot(counters), recount: usageSnapshot(recount) };
  }

  // ---------------------------------------------------------------- the queue

  async claim(holder: string, options: ClaimOptions): Promise<TaskRecord[]> {
    checkHolder(holder, "holder");
    const leaseMs = checkLeaseMs(options.leaseMs);
    const limit = positiveLimit(options.limit, 0);
    const tools = options.toolNames;
    if (limit === 0 || (tools !== undefined && tools.length === 0)) return [];
    validateOwnerLimits(options);
    const params: unknown[] = [
      holder,
      leaseMs,
      this.#now(),
      limit,
      options.maxRunningPerOwner ?? null,
      options.maxWaitingPerOwner ?? null,
    ];
    if (tools !== undefined) params.push(JSON.stringify(tools));
    const text = tools === undefined ? this.#sql.claim : this.#sql.claimTools;
    // With an owner limit, after the claim lock: claims run one at a time across the
    // cluster, so each counts the running tasks the ones before it took. Without one there
    // is nothing to count: claims run side by side, on disjoint rows (SKIP LOCKED).
    const limited = options.maxRunningPerOwner != null || options.maxWaitingPerOwner != null;
    const rows = limited
      ? await this.#locked("claim", text, params)
      : await this.#run("claim", text, params);
    // RETURNING gives no order: oldest first, as they were picked.
    rows.sort((x, y) => Number(x.seq) - Number(y.seq));
    return rows.map((row) => this.#changed(toRecord(row), "claimed"));
  }

  async renewLease(taskId: string, scope: OwnerScope, leaseMs: number): Promise<boolean> {
    requireFence(scope, "renewLease");
    const rows = await this.#run("renewLease", this.#sql.renewLease, [
      ...this.#fenced(taskId, scope),
      checkLeaseMs(leaseMs),
    ]);
    return rows.length > 0;
  }

  async releaseLease(taskId: string, scope: OwnerScope): Promise<boolean> {
    requireFence(scope, "releaseLease");
    const rows = await this.#run("releaseLease", this.#sql.releaseLease, [
      ...this.#fenced(taskId, scope),
      HANDED_BACK_MESSAGE,
      CANCELLED_WITHOUT_RUN_MESSAGE,
    ]);
    for (const row of rows) this.#emitRow(row, requeuedOrEnded(row.status as TaskStatus));
    return rows.length > 0;
  }

  async requeue(
    taskId: string,
    scope: OwnerScope,
    statusMessage: string | null,
  ): Promise<TaskRecord> {
    const record = await this.#transition(
      "requeue",
      () =>
        this.#writeOne("requeue", this.#sql.requeue, taskId, scope, [
          statusMessage ?? null,
          CANCELLED_WITHOUT_RUN_MESSAGE,
        ]),
      taskId,
      scope,
      null,
    );
    return this.#changed(record, requeuedOrEnded(record.status));
  }

  async recoverOrphans(options: { limit?: number } = {}): Promise<OrphanSweep> {
    let left = positiveLimit(options.limit, Number.POSITIVE_INFINITY);
    let requeued = 0;
    const failedTasks: TaskRecord[] = [];
    const cancelledTasks: TaskRecord[] = [];
    // Bounded batches, so one sweep never holds many row locks or one long transaction.
    while (left > 0) {
      const batch = Math.min(left, CLEANUP_BATCH);
      const rows = await this.#run("recoverOrphans", this.#sql.recoverOrphans, [
        this.#now(),
        batch,
        JSON.stringify(WORKER_LOST_ERROR),
        WORKER_LOST_ERROR.message,
        RETRY_TEMPLATE.text,
        WORKER_LOST_BYTES,
        CANCELLED_WITHOUT_RUN_MESSAGE,
      ]);
      for (const row of rows) {
        if (row.status === "failed") {
          failedTasks.push(this.#changed(toRecord(row), "status_changed"));
        } else if (row.status === "cancelled") {
          cancelledTasks.push(this.#changed(toRecord(row), "status_changed"));
        } else {
          requeued++;
          this.#emitRow(row, "queued");
        }
      }
      left -= rows.length;
      if (rows.length < batch) break;
    }
    return {
      requeued,
      failed: failedTasks.length,
      failedTasks,
      cancelled: cancelledTasks.length,
      cancelledTasks,
    };
  }

  // ---------------------------------------------------------------- feed and life cycle

  watch(listener: TaskChangeListener, taskId?: string): Unsubscribe {
    return this.#feed.watch(listener, taskId);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#feed.clear();
    await this.#settles.idle();
    await this.#notifier?.close();
    const unlisten = this.#unlisten;
    this.#unlisten = null;
    await unlisten?.().catch(() => {});
    await this.#backend.release();
  }

  /** Runs raw SQL through the store's pool (benchmarks and tests); not part of the contract. */
  query(text: string, params: readonly unknown[] = []): Promise<Row[]> {
    return this.#run("query", text, params);
  }

  // ---------------------------------------------------------------- internals

  #now(): number | null {
    return this.#clock === null ? null : this.#clock.now();
  }

  #byId(taskId: string, scope: OwnerScope): unknown[] {
    return [storableId(taskId), storedKey(scope), scope.includeUnowned, this.#now()];
  }

  /** The parameters of a fenced statement: {@link #byId}'s, then the fence or NULLs. */
  #fenced(taskId: string, scope: OwnerScope): unknown[] {
    const fence = scope.fence;
    return [
      storableId(taskId),
      storedKey(scope),
      scope.includeUnowned,
      this.#now(),
      fence?.holder ?? null,
      fence?.fencingToken ?? null,
    ];
  }

  async #run(
    operation: string,
    text: string,
    params: readonly unknown[],
    query: Query = this.#exec.query,
  ): Promise<Row[]> {
    if (this.#closed) throw taskErrors.storeUnavailable(`${operation}: the store was closed`);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            taskErrors.storeUnavailable(
              `${operation} got no answer from PostgreSQL within ${this.#timeoutMs} ms`,
            ),
          ),
        this.#timeoutMs,
      );
    });
    try {
      return await Promise.race([query(text, params), timeout]);
    } catch (error) {
      throw mapDriverError(error, operation);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * One conditional write; when it matches nothing, one read decides between
   * `not_found_or_unauthorized`, `invalid_transition` and `lease_lost` (or the intent's own
   * check), and when the task is in a state the write accepts after all (it changed in
   * between), the write is tried again.
   */
  async #transition(
    intent: Intent,
    write: () => Promise<Row | undefined>,
    taskId: string,
    scope: OwnerScope,
    kind: TaskChangeKind | null,
    check?: (task: TaskRecord) => void,
  ): Promise<TaskRecord> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const row = await write();
      // `null`: the caller announces the change itself (its kind depends on the row).
      if (row !== undefined)
        return kind === null ? toRecord(row) : this.#changed(toRecord(row), kind);
      const task = await this.#explainMiss(taskId, scope, intent);
      check?.(task);
    }
    throw taskErrors.storeUnavailable(`${intent} kept racing with concurrent writers; try again`);
  }

  /** One fenced statement of a run's write (see `Statements`): its row, if it applied. */
  async #writeOne(
    intent: Intent,
    text: string,
    taskId: string,
    scope: OwnerScope,
    extra: readonly unknown[],
  ): Promise<Row | undefined> {
    return (await this.#run(intent, text, [...this.#fenced(taskId, scope), ...extra]))[0];
  }

  /**
   * Removes up to one batch of expired rows, of one owner (`ownerKey`) or of any (`null`),
   * their counters in the same statement; how many.
   */
  async #reclaim(ownerKey: string | null): Promise<number> {
    const rows =
      ownerKey === null
        ? await this.#run("create", this.#sql.cleanup, [this.#now(), CLEANUP_BATCH])
        : await this.#run("create", this.#sql.reclaimOwner, [this.#now(), CLEANUP_BATCH, ownerKey]);
    for (const row of rows) this.#emitRow(row, "deleted");
    return rows.length;
  }

  /**
   * Runs `text` after taking the claim lock, in one implicit transaction sent in one round
   * trip (a script), so the statement sees every claim committed before it got the lock. One
   * round trip, not a transaction of four: under load each round trip also waits for this
   * process's event loop. The statement is a server-side prepared statement (made on the
   * connection the first time it runs there) executed with its parameters as literals, with
   * a generic plan: planning it on every claim cost ~1.5 ms inside the lock.
   */
  #locked(operation: string, text: string, params: readonly unknown[]): Promise<Row[]> {
    const script = `${this.#lockedPrefix(text)}(${params.map(sqlLiteral).join(", ")})`;
    return this.#run(operation, script, [], (t) => this.#exec.script(t));
  }

  /**
   * The part of {@link #locked}'s script that depends only on the statement (prepare it,
   * take the lock, `EXECUTE name`), built once per statement: claims are a hot path.
   */
  #lockedPrefix(text: string): string {
    let prefix = this.#lockedPrefixes.get(text);
    if (prefix === undefined) {
      const name = `mcp_tasks_${createHash("sha1").update(text).digest("hex").slice(0, 20)}`;
      const lock = this.#sql.claimLock.replace("$1::text", sqlLiteral(this.#table));
      prefix = `DO $prepare$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_prepared_statements WHERE name = '${name}') THEN
    EXECUTE ${dollarQuoted(`PREPARE ${name} AS ${text}`)};
  END IF;
END $prepare$;
SET LOCAL plan_cache_mode = force_generic_plan;
${lock};
EXECUTE ${name}`;
      this.#lockedPrefixes.set(text, prefix);
    }
    return prefix;
  }

  /**
   * Sends a batch of creates (see `Statements.create`); rows in batch order, `undefined` for
   * a create that inserted nothing. A second create of an id already in the batch is not
   * sent: it inserts nothing, and the store finds out why afterwards. `locked`: in one
   * transaction after the claim lock (see `Statements.claim`), serialised with every claim
   * and every other such create on any node.
   */
  async #sendCreates(batch: readonly Create[], locked: boolean): Promise<(Row | undefined)[]> {
    const seen = new Set<string>();
    const parts: string[] = [];
    batch.forEach((c, i) => {
      if (seen.has(c.taskId)) return;
      seen.add(c.taskId);
      parts.push(`{"i":${i},${c.json}`);
    });
    const operation = batch.length === 1 ? "create" : `create (${batch.length} tasks)`;
    const params = [this.#now(), `[${parts.join(",")}]`];
    const rows = locked
      ? await this.#locked(operation, this.#sql.create, params)
      : await this.#run(operation, this.#sql.create, params);
    const byPosition: (Row | undefined)[] = new Array(batch.length).fill(undefined);
    for (const row of rows) byPosition[Number(row.i)] = row;
    return byPosition;
  }

  /** A terminal transition, sent with the others of this moment in one statement. */
  #settle(
    intent: Intent,
    taskId: string,
    scope: OwnerScope,
    outcome: Outcome,
  ): Promise<TaskRecord> {
    const entry: Settle = { intent, taskId: storableId(taskId), scope, outcome };
    return this.#transition(
      intent,
      () => this.#settles.submit(entry),
      taskId,
      scope,
      "status_changed",
    );
  }

  /** Sends a batch of terminal transitions (see `Statements.settle`); rows in batch order. */
  async #sendSettles(batch: readonly Settle[]): Promise<(Row | undefined)[]> {
    const operation =
      batch.length === 1 ? (batch[0] as Settle).intent : `settle (${batch.length} tasks)`;
    const rows = await this.#run(operation, this.#sql.settle, [this.#now(), settleJson(batch)]);
    const byPosition: (Row | undefined)[] = new Array(batch.length).fill(undefined);
    for (const row of rows) {
      const { i, ...rest } = row;
      const { outcome } = batch[i as number] as Settle;
      // Columns the statement wrote from its parameters do not come back; fill them in.
      byPosition[i as number] = Object.assign(
        rest,
        terminalKnown(
          outcome.status,
          outcome.statusMessage,
          outcome.result === null ? null : JSON.parse(outcome.result),
          outcome.error === null ? null : JSON.parse(outcome.error),
        ),
      );
    }
    return byPosition;
  }

  /**
   * Throws the error a write that matched nothing deserves, or returns the task as it is:
   * `not_found_or_unauthorized`, else `invalid_transition`, else `lease_lost` when the write
   * carried the fence of a run that no longer holds the task.
   */
  async #explainMiss(taskId: string, scope: OwnerScope, intent: Intent): Promise<TaskRecord> {
    const task = await this.get(taskId, scope);
    assertIntentAllowed(task, intent);
    assertFence(task, scope.fence);
    return task;
  }

  #changed(record: TaskRecord, kind: TaskChangeKind): TaskRecord {
    this.#emit({ taskId: record.taskId, kind, status: record.status, version: record.version });
    return record;
  }

  #emitRow(row: Row, kind: TaskChangeKind): void {
    this.#emit({
      taskId: row.id as string,
      kind,
      status: row.status as TaskStatus,
      version: Number(row.version),
    });
  }

  #emit(change: TaskChange): void {
    this.#notifier?.publish(change);
    this.#deliver(change);
  }

  #deliver(change: TaskChange): void {
    if (!this.#feed.hasListeners(change.taskId)) return;
    // After the current operation returns, in order, like the memory store.
    this.#pending.push(change);
    if (this.#pending.length === 1) queueMicrotask(() => this.#flush());
  }

  #flush(): void {
    for (const change of this.#pending.splice(0)) this.#feed.emit(change);
  }

  #onNotification(payload: string): void {
    // Our own changes were delivered locally when the write returned.
    if (this.#closed || payload.startsWith(this.#ownPrefix)) return;
    for (const change of unpackChanges(payload).changes) this.#deliver(change);
  }
}

/** How a run (or a cancel) ends a task: the columns of one `Statements.settle` row. */
interface Outcome {
  readonly status: "completed" | "failed" | "cancelled";
  /** The result or the error as JSON text, or null. */
  readonly result: string | null;
  readonly error: string | null;
  readonly statusMessage: string | null;
  readonly bytes: number;
}

/** One terminal transition waiting for its batch. */
interface Settle {
  readonly intent: Intent;
  readonly taskId: string;
  readonly scope: OwnerScope;
  readonly outcome: Outcome;
}

/** One create waiting for its batch. */
interface Create {
  /** The row as `Statements.create` reads it, less its leading `{"i":n,`. */
  readonly json: string;
  readonly taskId: string;
}

/** One new task as a member of the JSON array `Statements.create` reads (see there). */
function createJson(
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
  // The request is JSON text already (checked by `toJson`): it goes in as it is.
  const limits = task.ownerLimits;
  const fair =
    limits === undefined
      ? `"ol":false,"nm":false,"mr":null,"mw":null`
      : `"ol":true,"nm":${task.statusMessage === undefined},"mr":${num(limits.maxRunningPerOwner)},"mw":${num(limits.maxWaitingPerOwner)}`;
  return `${fair},"id":${JSON.stringify(String(task.taskId))},"k":${JSON.stringify(scope.ownerKey)},"pp":${str(o.principalId)},"pt":${str(o.tenantId)},"pa":${str(o.audience)},"era":${str(task.era)},"m":${str(task.statusMessage)},"r":${request},"ttl":${num(task.ttlMs)},"an":${str(task.ttlAnchor)},"pi":${num(task.pollIntervalMs)},"tn":${str(task.request.toolName)},"ma":${policy.maxAttempts},"bo":${policy.backoffMs},"re":${policy.retryOnError},"dl":${num(policy.deadlineMs)},"b":${bytes},"tp":${str(traceContext?.traceparent)},"ts":${str(traceContext?.tracestate)},"h":${str(lease?.holder)},"l":${num(lease?.durationMs)}}`;
}

/** Usage rows (owner key, tasks, bytes) as a snapshot; the total is the sum of the owners'. */
function usageSnapshot(rows: readonly Row[]): UsageSnapshot {
  const owners: Record<string, { tasks: number; bytes: number }> = {};
  let tasks = 0;
  let totalRow: number | null = null;
  for (const row of rows) {
    const key = row.owner_key as string;
    const counts = { tasks: Number(row.tasks), bytes: Number(row.bytes) };
    if (key === TOTAL_KEY) {
      totalRow = counts.tasks;
      continue;
    }
    tasks += counts.tasks;
    if (counts.tasks !== 0 || counts.bytes !== 0) owners[key] = counts;
  }
  // The counters keep the total apart: report theirs, the recount has none.
  return { tasks: totalRow ?? tasks, owners };
}

/**
 * A batch as the JSON array `Statements.settle` reads. The result and error are JSON text
 * already (checked by `toJson`), so they go in as they are instead of being parsed and
 * serialised again.
 */
function settleJson(batch: readonly Settle[]): string {
  const rows = batch.map(({ taskId, scope, outcome: o }, i) => {
    const fence = scope.fence;
    return `{"i":${i},"id":${JSON.stringify(taskId)},"o":${JSON.stringify(storedKey(scope))},"u":${scope.includeUnowned},"h":${fence === undefined ? "null" : JSON.stringify(fence.holder)},"f":${fence === undefined ? "null" : fence.fencingToken},"s":"${o.status}","r":${o.result ?? "null"},"e":${o.error ?? "null"},"m":${JSON.stringify(o.statusMessage)},"b":${o.bytes}}`;
  });
  return `[${rows.join(",")}]`;
}

/** The columns a terminal transition wrote and does not return (see `TERMINAL_KNOWN`). */
function terminalKnown(
  status: TaskStatus,
  statusMessage: string | null,
  result: unknown,
  error: unknown,
): Row {
  return {
    status,
    status_message: statusMessage,
    result,
    error,
    input_requests: {},
    // The run's lease ends with the task.
    lease_holder: null,
    lease_expires_at: null,
    available_at: null,
  };
}

/** Checks a worker's name: it is stored and compared, so it must be short and non-empty. */
function checkHolder(holder: unknown, what: string): void {
  if (typeof holder !== "string" || holder.length === 0 || holder.length > 256) {
    throw taskErrors.invalidTask(`${what} must be a non-empty string of at most 256 characters`);
  }
}

function checkLeaseMs(leaseMs: number): number {
  if (!(Number.isSafeInteger(leaseMs) && leaseMs > 0)) {
    throw taskErrors.invalidTask("leaseMs must be a positive integer");
  }
  return leaseMs;
}

/** Lease calls name the run they are about: without a fence there is none. */
function requireFence(scope: OwnerScope, operation: string): void {
  const fence = scope.fence;
  if (
    fence === undefined ||
    typeof fence.holder !== "string" ||
    !Number.isSafeInteger(fence.fencingToken)
  ) {
    throw taskErrors.invalidTask(`${operation} needs the run's fence in scope.fence`);
  }
}

/** A record with an empty input ledger, to check a batch's shape on its own. */
const NO_INPUT = {
  taskId: "",
  inputRequests: {},
  inputResponses: {},
  answeredInputKeys: [],
} as unknown as TaskRecord;

/**
 * A value as an SQL literal, for a script (see `Executor.script`): NULL, a finite number, a
 * boolean, or text as an escape-string literal (`E'…'`, read the same whatever
 * `standard_conforming_strings` says). Text holding U+0000 is refused (core refuses it
 * before any store; JSON text carries it escaped).
 */
function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw taskErrors.invalidTask("a number must be finite");
    return String(value);
  }
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  const text = String(value);
  if (text.includes("\u0000")) throw taskErrors.invalidTask("text must not contain U+0000");
  return `E'${text.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;
}

/** `text` as a dollar-quoted literal, with a tag it does not contain. */
function dollarQuoted(text: string): string {
  let tag = "q";
  while (text.includes(`$${tag}$`)) tag += "q";
  return `$${tag}$${text}$${tag}$`;
}
