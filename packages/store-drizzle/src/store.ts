import type {
  ClaimOptions,
  InputRequest,
  InputResponse,
  JsonRpcErrorObject,
  OrphanSweep,
  SubmitInputResult,
  TakeInputResult,
  TaskChange,
  TaskChangeListener,
  TaskPage,
  TaskRecord,
  Unsubscribe,
} from "@mcp-tasks/core";
import type {
  ListQuery,
  NewestQuery,
  NewTask,
  OwnerScope,
  TaskQueueStore,
  UsageAudit,
} from "@mcp-tasks/core/store";
import { ChangeRelay } from "./change-relay.js";
import { ClaimCursor } from "./claim-cursor.js";
import { CreateBatcher } from "./create-batching.js";
import type { Executor, Query, Row } from "./executor.js";
import type { BatchedNotifier, Subscribe } from "./feed.js";
import { GetBatcher } from "./get-batching.js";
import type { StoreContext } from "./operations/context.js";
import { create } from "./operations/create.js";
import { cleanupExpired, deleteTask } from "./operations/housekeeping.js";
import * as queue from "./operations/queue.js";
import * as reads from "./operations/reads.js";
import * as transitions from "./operations/transitions.js";
import { type DrizzleTaskStoreOptions, type NotifyMode, resolveSettings } from "./options.js";
import { buildPlans } from "./plans/index.js";
import { SettleBatcher } from "./settle-batching.js";
import { StatementRunner } from "./statement-runner.js";
import { checkTaskTables } from "./table-check.js";

export { type DrizzleTaskStoreOptions, MAX_TTL_MS, type NotifyMode } from "./options.js";

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

/**
 * The PostgreSQL task store, for a PostgreSQL server (postgres.js or node-postgres) or an
 * embedded PGlite, from the same schema and statements. Every lifecycle operation is one
 * conditional statement and one round trip; a failed one costs one more read to say why.
 * Implements {@link TaskQueueStore}: the task table is the queue, and the writes of a run
 * carry its fence into the same conditional statement. Open one with
 * `createPostgresTaskStore`, `createPGliteTaskStore`, or `createTaskStore` on a connection
 * you have (any driver, or a Drizzle database).
 *
 * The methods delegate to the operations (`operations/`), which send the statement plans
 * (`plans/`) through the executor; settle and create batching, the change relay and the
 * options have their own modules.
 */
export class DrizzleTaskStore implements TaskQueueStore {
  readonly schema: string;
  readonly #backend: StoreBackend;
  readonly #ctx: StoreContext;
  #closed = false;

  /** Made by the factories (`createTaskStore`, …), which call {@link start}. */
  constructor(backend: StoreBackend, options: DrizzleTaskStoreOptions, defaultNotify: NotifyMode) {
    const settings = resolveSettings(
      options,
      backend.executor.kind,
      backend.sendNotifications !== null,
      defaultNotify,
    );
    this.schema = settings.schema;
    this.#backend = backend;
    const clock = settings.clock;
    const now = clock === null ? () => null : () => clock.now();
    const runner = new StatementRunner(backend.executor, settings.timeoutMs, settings.table);
    const relay = new ChangeRelay(backend, settings.channel, settings.notifyInTransaction);
    const plans = buildPlans({
      table: settings.table,
      usageTable: settings.usageTable,
      notify: {
        channel: settings.notifyInTransaction ? settings.channel : null,
        origin: relay.origin,
      },
      bounds: settings.bounds,
      restartGraceMs: settings.restartGraceMs,
    });
    this.#ctx = {
      settings,
      plans,
      runner,
      gets: new GetBatcher(
        runner,
        plans,
        backend.reads ?? backend.executor.query,
        settings.timeoutMs,
      ),
      relay,
      creates: new CreateBatcher(runner, plans, now, settings.timeoutMs),
      settles: new SettleBatcher(runner, plans, now, settings.timeoutMs),
      claimCursor: new ClaimCursor(),
      now,
    };
  }

  /**
   * Checks that the schema holds the store's tables (else a `TaskTablesNotMigratedError`),
   * then starts listening for other nodes' changes; the factories call it.
   */
  async start(): Promise<this> {
    try {
      await checkTaskTables(this.#backend.executor.script, this.schema);
      await this.#ctx.relay.listen();
    } catch (error) {
      await this.#backend.release().catch(() => {});
      throw error;
    }
    return this;
  }

  // ---------------------------------------------------------------- reads

  async create(task: NewTask, scope: OwnerScope): Promise<TaskRecord> {
    return create(this.#ctx, task, scope);
  }

  async get(taskId: string, scope: OwnerScope): Promise<TaskRecord> {
    return reads.get(this.#ctx, taskId, scope);
  }

  async list(scope: OwnerScope, query: ListQuery): Promise<TaskPage> {
    return reads.list(this.#ctx, scope, query);
  }

  async listNewest(scope: OwnerScope, query: NewestQuery): Promise<TaskPage> {
    return reads.listNewest(this.#ctx, scope, query);
  }

  async listNewestAcrossOwners(query: NewestQuery): Promise<TaskPage> {
    return reads.listNewestAcrossOwners(this.#ctx, query);
  }

  async getAcrossOwners(taskId: string): Promise<TaskRecord> {
    return reads.getAcrossOwners(this.#ctx, taskId);
  }

  // ---------------------------------------------------------------- transitions

  async complete(
    taskId: string,
    scope: OwnerScope,
    result: Readonly<Record<string, unknown>>,
    statusMessage: string | null = null,
  ): Promise<TaskRecord> {
    return transitions.complete(this.#ctx, taskId, scope, result, statusMessage);
  }

  async fail(
    taskId: string,
    scope: OwnerScope,
    error: JsonRpcErrorObject,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    return transitions.fail(this.#ctx, taskId, scope, error, statusMessage);
  }

  async markCancelled(
    taskId: string,
    scope: OwnerScope,
    statusMessage: string | null = "The task was cancelled by request.",
  ): Promise<TaskRecord> {
    return transitions.markCancelled(this.#ctx, taskId, scope, statusMessage);
  }

  async requireInput(
    taskId: string,
    scope: OwnerScope,
    requests: Readonly<Record<string, InputRequest>>,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    return transitions.requireInput(this.#ctx, taskId, scope, requests, statusMessage);
  }

  async setStatusMessage(
    taskId: string,
    scope: OwnerScope,
    statusMessage: string | null,
  ): Promise<TaskRecord> {
    return transitions.setStatusMessage(this.#ctx, taskId, scope, statusMessage);
  }

  async requestCancel(taskId: string, scope: OwnerScope): Promise<TaskRecord> {
    return transitions.requestCancel(this.#ctx, taskId, scope);
  }

  async submitInput(
    taskId: string,
    scope: OwnerScope,
    responses: Readonly<Record<string, InputResponse>>,
  ): Promise<SubmitInputResult> {
    return transitions.submitInput(this.#ctx, taskId, scope, responses);
  }

  async takeInputResponses(taskId: string, scope: OwnerScope): Promise<TakeInputResult> {
    return transitions.takeInputResponses(this.#ctx, taskId, scope);
  }

  async delete(taskId: string, scope: OwnerScope): Promise<void> {
    return deleteTask(this.#ctx, taskId, scope);
  }

  async cleanupExpired(options: { limit?: number } = {}): Promise<number> {
    return cleanupExpired(this.#ctx, options);
  }

  async auditUsage(): Promise<UsageAudit> {
    return reads.auditUsage(this.#ctx);
  }

  // ---------------------------------------------------------------- the queue

  async claim(holder: string, options: ClaimOptions): Promise<TaskRecord[]> {
    return queue.claim(this.#ctx, holder, options);
  }

  async renewLease(taskId: string, scope: OwnerScope, leaseMs: number): Promise<boolean> {
    return queue.renewLease(this.#ctx, taskId, scope, leaseMs);
  }

  async releaseLease(taskId: string, scope: OwnerScope): Promise<boolean> {
    return queue.releaseLease(this.#ctx, taskId, scope);
  }

  async requeue(
    taskId: string,
    scope: OwnerScope,
    statusMessage: string | null,
  ): Promise<TaskRecord> {
    return queue.requeue(this.#ctx, taskId, scope, statusMessage);
  }

  async recoverOrphans(options: { limit?: number } = {}): Promise<OrphanSweep> {
    return queue.recoverOrphans(this.#ctx, options);
  }

  // ---------------------------------------------------------------- feed and life cycle

  watch(listener: TaskChangeListener, taskId?: string): Unsubscribe {
    return this.#ctx.relay.watch(listener, taskId);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#ctx.runner.close();
    this.#ctx.relay.stopDelivering();
    // The outcomes already queued are sent (and announced) before the relay closes.
    await this.#ctx.settles.idle();
    await this.#ctx.relay.close();
    await this.#backend.release();
  }

  /**
   * Runs raw SQL through the store's pool (benchmarks and tests), unprepared; not part of the
   * contract.
   */
  query(text: string, params: readonly unknown[] = []): Promise<Row[]> {
    return this.#ctx.runner.run("query", { text, values: params }, this.#backend.executor.adhoc);
  }
}
