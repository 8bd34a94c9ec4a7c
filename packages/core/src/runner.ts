import { availableParallelism } from "node:os";
import { ChangeFeed } from "./change-feed.js";
import { ClaimScheduler } from "./claim-scheduler.js";
import { type OwnerLimits, validateOwnerLimits } from "./fairness.js";
import { HandlerSlots } from "./handler-slots.js";
import { createIdGenerator } from "./ids.js";
import { OutcomeSettler } from "./outcome-settler.js";
import type { Owner } from "./owner.js";
import type { Mutable } from "./record-copy.js";
import { Run } from "./run.js";
import type { RunCollaborators } from "./run-collaborators.js";
import type { RunnerStats, StartTaskInput, TaskRunnerOptions } from "./runner-options.js";
import type { TaskService } from "./service.js";
import type { CreateTaskInput } from "./service-options.js";
import type { Unsubscribe } from "./store.js";
import type { TaskRecord } from "./task.js";
import type { TaskHandler, TaskProgress, TaskProgressListener } from "./task-context.js";
import { executionPolicyOf, type ToolDefinition } from "./tool.js";

/**
 * Runs tool handlers as tasks, era-neutrally. On a queue store (see `TaskQueueStore`) it is
 * a worker: a task is created queued (or claimed at once by this node when it has room),
 * claimed by any node with the tool, run under a renewed lease and a fence, and re-run
 * elsewhere when its worker is lost, as its tool's policy allows. Cancellation of either
 * style reaches the handler through `ctx.signal`, woken by the store's change feed, so a
 * request that arrives on another node works too:
 *
 * - immediate (`TaskService.cancelNow`, the 2025-11-25 era): the task is `cancelled` before
 *   the caller hears back; whatever the handler returns later is discarded.
 * - cooperative (`TaskService.requestCancel`, the 2026-07-28 era): the task ends `cancelled`
 *   if the handler stops on its signal (throws), or keeps the handler's outcome if that
 *   came first.
 *
 * The runner wires its parts together: the handler slots (`handler-slots.ts`), the claim
 * scheduling (`claim-scheduler.ts`), the outcome writes (`outcome-settler.ts`) and one
 * {@link Run} per task it runs.
 */
export class TaskRunner {
  readonly service: TaskService;
  /** This worker's name: the lease holder of the tasks it runs. */
  readonly holder: string;
  /** Most handlers running at once. */
  readonly concurrency: number;
  /** The per-owner limits this runner's claims and creations apply (see the options). */
  readonly ownerLimits: OwnerLimits;
  readonly #tools = new Map<string, ToolDefinition>();
  readonly #slots: HandlerSlots;
  readonly #claims: ClaimScheduler;
  readonly #progress = new ChangeFeed<TaskProgress>((error, report) =>
    this.#onError(error, report.taskId),
  );
  readonly #onError: (error: unknown, taskId: string) => void;
  /** What every run of this runner is given. */
  readonly #runsWith: RunCollaborators;
  readonly #leaseMs: number;
  readonly #stats = { started: 0, superseded: 0, handedBack: 0 };

  constructor(options: TaskRunnerOptions) {
    const service = options.service;
    this.service = service;
    const onError =
      options.onError ??
      ((error: unknown, taskId: string) => console.error(`task ${taskId}:`, error));
    this.#onError = onError;
    const settleRetryMs = options.settleRetryMs ?? 100;
    this.holder =
      options.lease?.holder ?? `worker-${process.pid}-${createIdGenerator()().slice(0, 8)}`;
    this.#leaseMs = options.lease?.durationMs ?? 30_000;
    this.concurrency = options.concurrency ?? 16 * availableParallelism();
    if (!(Number.isSafeInteger(this.concurrency) && this.concurrency >= 1)) {
      throw new RangeError("concurrency must be a positive integer");
    }
    const maxRunning = options.maxRunningPerOwner ?? Math.max(1, Math.floor(this.concurrency / 4));
    // No running cap (a single-tenant server) means no per-owner limit at all, unless asked:
    // claims then need not count anything, so they run side by side without the claim lock.
    const maxWaiting =
      options.maxWaitingPerOwner ??
      (maxRunning === Number.POSITIVE_INFINITY ? Number.POSITIVE_INFINITY : this.concurrency);
    this.ownerLimits = {
      ...(maxRunning !== Number.POSITIVE_INFINITY && { maxRunningPerOwner: maxRunning }),
      ...(maxWaiting !== Number.POSITIVE_INFINITY && { maxWaitingPerOwner: maxWaiting }),
    };
    if ((this.ownerLimits.maxRunningPerOwner ?? 1) < 1) {
      throw new RangeError("maxRunningPerOwner must be a positive integer or Infinity");
    }
    validateOwnerLimits(this.ownerLimits);
    this.#slots = new HandlerSlots(
      this.concurrency,
      this.ownerLimits.maxWaitingPerOwner ?? Number.POSITIVE_INFINITY,
      () => this.#claims.wake(),
    );
    this.#claims = new ClaimScheduler({
      service,
      holder: this.holder,
      leaseMs: this.#leaseMs,
      scanIntervalMs: options.scanIntervalMs ?? 500,
      ownerLimits: this.ownerLimits,
      slots: this.#slots,
      tools: this.#tools,
      launch: (record, handler) => this.#launch(record, handler),
      onError,
    });
    this.#runsWith = {
      settings: {
        service,
        holder: this.holder,
        leaseMs: this.#leaseMs,
        renewEveryMs: options.lease?.renewEveryMs ?? Math.max(1, Math.floor(this.#leaseMs / 3)),
        recheckMs: options.recheckMs ?? 30_000,
        retryMs: settleRetryMs,
        tracer: options.tracer ?? service.tracer,
      },
      slots: this.#slots,
      reports: {
        progress: (report) => this.#progress.emit(report),
        stopped: (reason) => {
          if (reason === "superseded") this.#stats.superseded += 1;
          else if (reason === "handed_back") this.#stats.handedBack += 1;
        },
        error: onError,
      },
      outcomes: new OutcomeSettler({
        attempts: options.settleAttempts ?? 10,
        retryMs: settleRetryMs,
        onError,
        requeuedWithBackoff: (backoffMs) => this.#claims.wakeAfter(backoffMs),
      }),
    };
    this.register(options.tools ?? []);
    if ((options.claim ?? true) && service.queues) this.#claims.start();
  }

  /**
   * Adds tools this node can run. A name already registered must be the same definition
   * (the facades register the tools they serve; the app may have given them already).
   */
  register(tools: readonly ToolDefinition[]): void {
    for (const tool of tools) {
      const known = this.#tools.get(tool.name);
      if (known !== undefined && known !== tool) {
        throw new TypeError(`Duplicate tool name: ${tool.name}`);
      }
      this.#tools.set(tool.name, tool);
    }
    if (tools.length > 0) this.#claims.workMayBeQueued();
  }

  /** True while this node claims queued tasks. */
  get claiming(): boolean {
    return this.#claims.claiming;
  }

  /** True when this runner holds leases on the tasks it runs (a queue store). */
  get leasing(): boolean {
    return this.service.queues;
  }

  /** Counters since this runner started. */
  get stats(): RunnerStats {
    return {
      claimed: this.#claims.claimed,
      ...this.#stats,
      running: this.#slots.running,
      peakRunning: this.#slots.peakRunning,
    };
  }

  /** How many handlers are running on this runner. */
  get active(): number {
    return this.#slots.running;
  }

  /**
   * Creates the task durably and returns it. On a queue store it is claimed by this node at
   * once when this node claims and has room (its handler starts in the background), and is
   * created queued otherwise, for whichever worker has room first. The execution policy is
   * the tool's (`ToolDefinition.execution`) unless `input.execution` says otherwise.
   */
  async start(caller: Owner, input: StartTaskInput): Promise<TaskRecord> {
    const tool = this.#tools.get(input.request.toolName);
    const handler = input.handler ?? tool?.run;
    // The caller's fields without the closure, then this node's, set one by one: spread into
    // one literal with conditional spreads, this object cost ~1 µs on every create.
    const { handler: _closure, ...fields } = input;
    const create: Mutable<CreateTaskInput> = fields;
    const execution = input.execution ?? (tool ? executionPolicyOf(tool) : undefined);
    const queues = this.service.queues;
    if (!queues && handler === undefined) {
      throw new TypeError(`No handler for tool ${input.request.toolName}: register the tool`);
    }
    // Creation waits for nothing else (no claim in flight, no scan): see roomForCreate.
    const runHere =
      handler !== undefined &&
      (!queues ||
        (this.#claims.claiming && this.#claims.roomForCreate(caller, tool !== undefined) > 0));
    // The slot is this task's while it is created, so no claim takes it meanwhile.
    const releaseSlot = queues && runHere ? this.#claims.reserveForCreate(caller) : undefined;
    // Or created queued: its own `queued` change may be no sign of claimable work.
    const queuedAtCap =
      queues && !runHere ? this.#claims.createsQueued(caller, tool !== undefined) : undefined;
    if (execution !== undefined) create.execution = execution;
    if (queues && runHere) create.lease = { holder: this.holder, durationMs: this.#leaseMs };
    // The store creates it queued when its owner is at its limit, and says why it waits.
    if (queues) create.ownerLimits = this.ownerLimits;
    let record: TaskRecord;
    let failed = true;
    try {
      record = await this.service.create(caller, create);
      failed = false;
    } finally {
      releaseSlot?.();
      queuedAtCap?.(failed);
    }
    // Created queued instead (its owner is at its limit): a claim takes it later.
    if (runHere && (!queues || record.execution.holder === this.holder)) {
      this.#launch(record, handler);
    } else if (queues && record.execution.holder === null) {
      // `runHere`: it asked for a lease, so the store found its owner at its cap.
      this.#claims.createdQueued(caller, runHere);
    }
    return record;
  }

  /**
   * Subscribes to the progress reports of one task (or of every task when `taskId` is
   * absent) run by this runner. Reports are not stored, so only this node hears them.
   */
  onProgress(listener: TaskProgressListener, taskId?: string): Unsubscribe {
    return this.#progress.watch(listener, taskId);
  }

  /** Resolves when the handler of `taskId` (if it runs here) has finished and settled. */
  async settled(taskId: string): Promise<void> {
    await Promise.all(
      [...this.#slots.runs].filter((run) => run.taskId === taskId).map((run) => run.done),
    );
  }

  /** Resolves once every running handler has finished and its outcome is stored. */
  async drain(): Promise<void> {
    const runs = this.#slots.runs;
    while (runs.size > 0) {
      await Promise.all([...runs].map((run) => run.done));
    }
  }

  /** Stops claiming queued tasks (e.g. on SIGTERM); running handlers go on. */
  stopClaiming(): void {
    this.#claims.stop();
  }

  /** Aborts every running handler's signal, e.g. on shutdown. */
  abortAll(reason?: unknown): void {
    for (const run of this.#slots.runs) run.abort(reason);
  }

  /**
   * Hands every running task back to the queue (on shutdown, after the drain time): the
   * attempt does not count, and another node claims it at once. Their handlers are
   * aborted; whatever they return is discarded.
   */
  async releaseLeases(): Promise<void> {
    await Promise.all([...this.#slots.runs].map((run) => run.handBack()));
  }

  /**
   * Graceful shutdown: stop claiming, let running handlers finish for up to `drainMs`,
   * then hand the rest back to the queue (queue stores) or cancel them (other stores).
   */
  async shutdown({ drainMs = 10_000 }: { drainMs?: number } = {}): Promise<void> {
    this.stopClaiming();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), drainMs);
    });
    try {
      if ((await Promise.race([this.drain(), timeout])) !== "timeout") return;
    } finally {
      clearTimeout(timer);
    }
    if (this.service.queues) {
      // Handed back: whatever the aborted handlers still do is fenced out, so nothing
      // waits for them (one that ignores its signal must not hold up the shutdown).
      await this.releaseLeases();
      return;
    }
    this.abortAll();
    await this.drain();
  }

  #launch(record: TaskRecord, handler: TaskHandler): void {
    const writer = this.service.queues
      ? this.service.forRun(record.owner, record.taskId, {
          holder: this.holder,
          fencingToken: record.execution.fencingToken,
        })
      : this.service.forRun(record.owner, record.taskId);
    const run = new Run(this.#runsWith, record, handler, writer);
    this.#slots.add(run);
    this.#stats.started += 1;
    run.done = run.execute().finally(() => {
      this.#slots.remove(run);
      // A slot came free: look for queued work.
      this.#claims.runEnded(record.owner);
    });
  }
}
