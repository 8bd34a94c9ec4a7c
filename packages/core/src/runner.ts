import { availableParallelism } from "node:os";
import { ChangeFeed } from "./change-feed.js";
import { isTaskError } from "./errors.js";
import { createIdGenerator } from "./ids.js";
import type { Owner } from "./owner.js";
import { Run, type RunHost, RunStoppedError } from "./run.js";
import type { CreateTaskInput, TaskService } from "./service.js";
import type { Unsubscribe } from "./store.js";
import type { TaskRecord } from "./task.js";
import type { TaskHandler, TaskProgress, TaskProgressListener } from "./task-context.js";
import { executionPolicyOf, type ToolDefinition } from "./tool.js";

/** What {@link TaskRunner.start} needs: the task to create, named by its tool. */
export interface StartTaskInput extends CreateTaskInput {
  /**
   * Runs this task here instead of the registered tool of `request.toolName`. Only this
   * node knows a closure: if the task is re-run elsewhere (its worker was lost), that node
   * runs the registered tool. Prefer registering tools.
   */
  readonly handler?: TaskHandler;
}

/** What a runner has done since it started, for metrics. */
export interface RunnerStats {
  /** Tasks this node claimed from the queue (created-and-claimed ones not included). */
  readonly claimed: number;
  /** Runs started here (claimed from the queue or at creation). */
  readonly started: number;
  /** Runs stopped because another run took the task over (this run's lease was lost). */
  readonly superseded: number;
  /** Runs handed back to the queue on shutdown. */
  readonly handedBack: number;
  /** Handlers running now. */
  readonly running: number;
  /** The most handlers that ran at once. */
  readonly peakRunning: number;
}

/** Settings of a {@link TaskRunner}. */
export interface TaskRunnerOptions {
  readonly service: TaskService;
  /**
   * The tools this node runs, by name. A claimed task runs the handler registered for its
   * `request.toolName`; the facades register theirs too ({@link TaskRunner.register}).
   */
  readonly tools?: readonly ToolDefinition[];
  /** Told about outcomes that could not be stored after retries; default `console.error`. */
  readonly onError?: (error: unknown, taskId: string) => void;
  /**
   * Attempts to store an outcome while the store is unavailable; default 10 (with the
   * default delays, about 20 s: a database restart or failover, not just a blip).
   */
  readonly settleAttempts?: number;
  /** First retry delay, doubled each attempt up to 5 s; default 100 ms. */
  readonly settleRetryMs?: number;
  /**
   * Every running task is re-read this often in case a change notification was lost (e.g.
   * across a database reconnect), so a cancel request or an answer is never missed for
   * good. Default 30 000 ms; 0 disables.
   */
  readonly recheckMs?: number;
  /**
   * This worker's lease on the tasks it runs: `holder` names it (unique per process;
   * default a random `worker-<pid>-<id>`), the lease lasts `durationMs` (default 30 s) and
   * is renewed every `renewEveryMs` (default a third of it). A task whose lease runs out
   * (the node died or stalled) is re-run elsewhere or failed "Worker lost".
   */
  readonly lease?: {
    readonly holder?: string;
    readonly durationMs?: number;
    readonly renewEveryMs?: number;
  };
  /**
   * Whether this node claims and runs queued tasks (needs a queue store); default true.
   * An HTTP-only node sets `false`: it creates tasks, workers elsewhere run them.
   */
  readonly claim?: boolean;
  /** Most handlers running at once on this node; default 16 per CPU core. */
  readonly concurrency?: number;
  /**
   * How often to look for claimable tasks and recover orphans even without a change
   * notification (which wakes claiming at once); default 1000 ms.
   */
  readonly scanIntervalMs?: number;
}

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
 */
export class TaskRunner {
  readonly service: TaskService;
  /** This worker's name: the lease holder of the tasks it runs. */
  readonly holder: string;
  /** Most handlers running at once. */
  readonly concurrency: number;
  readonly #tools = new Map<string, ToolDefinition>();
  readonly #runs = new Map<string, Run>();
  readonly #progress = new ChangeFeed<TaskProgress>((error, report) =>
    this.#onError(error, report.taskId),
  );
  readonly #onError: (error: unknown, taskId: string) => void;
  readonly #settleAttempts: number;
  readonly #settleRetryMs: number;
  readonly #host: RunHost;
  readonly #leaseMs: number;
  readonly #scanIntervalMs: number;
  #claiming = false;
  #unwatch: Unsubscribe | undefined;
  #scanner: NodeJS.Timeout | undefined;
  /** A claim pass is running; `#again` asks for one more after it. */
  #pass: Promise<void> | null = null;
  #again = false;
  readonly #stats = { claimed: 0, started: 0, superseded: 0, handedBack: 0, peakRunning: 0 };

  constructor(options: TaskRunnerOptions) {
    this.service = options.service;
    this.#onError = options.onError ?? ((error, taskId) => console.error(`task ${taskId}:`, error));
    this.#settleAttempts = options.settleAttempts ?? 10;
    this.#settleRetryMs = options.settleRetryMs ?? 100;
    this.holder =
      options.lease?.holder ?? `worker-${process.pid}-${createIdGenerator()().slice(0, 8)}`;
    this.#leaseMs = options.lease?.durationMs ?? 30_000;
    this.concurrency = options.concurrency ?? 16 * availableParallelism();
    this.#scanIntervalMs = options.scanIntervalMs ?? 1000;
    if (!(Number.isSafeInteger(this.concurrency) && this.concurrency >= 1)) {
      throw new RangeError("concurrency must be a positive integer");
    }
    this.#host = {
      service: this.service,
      holder: this.holder,
      leaseMs: this.#leaseMs,
      renewEveryMs: options.lease?.renewEveryMs ?? Math.max(1, Math.floor(this.#leaseMs / 3)),
      recheckMs: options.recheckMs ?? 30_000,
      emitProgress: (report) => this.#progress.emit(report),
      countStop: (reason) => {
        if (reason === "superseded") this.#stats.superseded += 1;
        else if (reason === "handed_back") this.#stats.handedBack += 1;
      },
      reportError: (error, taskId) => this.#onError(error, taskId),
      storeOutcome: (taskId, write) => this.#storeOutcome(taskId, write),
    };
    this.register(options.tools ?? []);
    if ((options.claim ?? true) && this.service.queues) this.#startClaiming();
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
    if (tools.length > 0) this.#wake();
  }

  /** True while this node claims queued tasks. */
  get claiming(): boolean {
    return this.#claiming;
  }

  /** True when this runner holds leases on the tasks it runs (a queue store). */
  get leasing(): boolean {
    return this.service.queues;
  }

  /** Counters since this runner started. */
  get stats(): RunnerStats {
    return { ...this.#stats, running: this.#runs.size };
  }

  /** How many handlers are running on this runner. */
  get active(): number {
    return this.#runs.size;
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
    const { handler: _closure, ...create } = input;
    const execution = input.execution ?? (tool ? executionPolicyOf(tool) : undefined);
    const queues = this.service.queues;
    const runHere =
      handler !== undefined && (!queues || (this.#claiming && this.#runs.size < this.concurrency));
    if (!queues && handler === undefined) {
      throw new TypeError(`No handler for tool ${input.request.toolName}: register the tool`);
    }
    const record = await this.service.create(caller, {
      ...create,
      ...(execution !== undefined && { execution }),
      ...(queues && runHere && { lease: { holder: this.holder, durationMs: this.#leaseMs } }),
      ...(queues && !runHere && create.statusMessage === undefined && { statusMessage: "Queued" }),
    });
    if (runHere) this.#launch(record, handler);
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
    await this.#runs.get(taskId)?.done;
  }

  /** Resolves once every running handler has finished and its outcome is stored. */
  async drain(): Promise<void> {
    while (this.#runs.size > 0) {
      await Promise.all([...this.#runs.values()].map((run) => run.done));
    }
  }

  /** Stops claiming queued tasks (e.g. on SIGTERM); running handlers go on. */
  stopClaiming(): void {
    this.#claiming = false;
    this.#unwatch?.();
    this.#unwatch = undefined;
    if (this.#scanner !== undefined) clearInterval(this.#scanner);
    this.#scanner = undefined;
  }

  /** Aborts every running handler's signal, e.g. on shutdown. */
  abortAll(reason?: unknown): void {
    for (const run of this.#runs.values()) run.abort(reason);
  }

  /**
   * Hands every running task back to the queue (on shutdown, after the drain time): the
   * attempt does not count, and another node claims it at once. Their handlers are
   * aborted; whatever they return is discarded.
   */
  async releaseLeases(): Promise<void> {
    await Promise.all([...this.#runs.values()].map((run) => run.handBack()));
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
    const run = new Run(this.#host, record, handler, writer);
    this.#runs.set(record.taskId, run);
    this.#stats.started += 1;
    this.#stats.peakRunning = Math.max(this.#stats.peakRunning, this.#runs.size);
    run.done = run.execute().finally(() => {
      this.#runs.delete(record.taskId);
      // A slot came free: look for queued work.
      this.#wake();
    });
  }

  #startClaiming(): void {
    this.#claiming = true;
    // Woken by the change feed: a task became claimable somewhere.
    this.#unwatch = this.service.watch((change) => {
      if (change.kind === "queued") this.#wake();
    });
    this.#scanner = setInterval(() => {
      void this.service.recoverOrphans({ limit: 100 }).then(
        () => this.#wake(),
        (error) => this.#onError(error, "*"),
      );
    }, this.#scanIntervalMs);
    this.#scanner.unref();
    this.#wake();
  }

  /** Runs a claim pass now, or one more after the pass in progress. */
  #wake(): void {
    if (!this.#claiming) return;
    if (this.#pass !== null) {
      this.#again = true;
      return;
    }
    this.#pass = this.#claimPass().finally(() => {
      this.#pass = null;
      if (this.#again) {
        this.#again = false;
        this.#wake();
      }
    });
  }

  async #claimPass(): Promise<void> {
    for (;;) {
      const room = this.concurrency - this.#runs.size;
      if (!this.#claiming || room <= 0 || this.#tools.size === 0) return;
      let claimed: TaskRecord[];
      try {
        claimed = await this.service.claim(this.holder, {
          limit: room,
          leaseMs: this.#leaseMs,
          toolNames: [...this.#tools.keys()],
        });
      } catch (error) {
        if (!isTaskError(error, "store_unavailable")) this.#onError(error, "*");
        return;
      }
      this.#stats.claimed += claimed.length;
      for (const record of claimed) {
        const tool = this.#tools.get(record.request.toolName);
        if (tool === undefined) continue; // filtered by name: cannot happen
        this.#launch(record, tool.run);
      }
      if (claimed.length < room) return;
    }
  }

  /** Stores a run's outcome, retrying while the store is unavailable. */
  async #storeOutcome(taskId: string, write: () => Promise<unknown>): Promise<void> {
    let delay = this.#settleRetryMs;
    for (let attempt = 1; ; attempt++) {
      try {
        await write();
        return;
      } catch (error) {
        // Someone else ended the task first (an immediate cancel, or the task was removed),
        // or another run took it over: the late outcome is discarded, never written over.
        if (isTaskError(error, "invalid_transition")) return;
        if (isTaskError(error, "not_found_or_unauthorized")) return;
        if (isTaskError(error, "lease_lost")) {
          this.#runs.get(taskId)?.abort(new RunStoppedError(taskId, "superseded"));
          return;
        }
        if (!isTaskError(error, "store_unavailable") || attempt >= this.#settleAttempts) {
          this.#onError(error, taskId);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, 5_000);
      }
    }
  }
}
