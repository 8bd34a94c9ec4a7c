import { ChangeFeed } from "./change-feed.js";
import { isTaskError } from "./errors.js";
import { isTerminal } from "./lifecycle.js";
import type { Owner } from "./owner.js";
import type { CreateTaskInput, TaskService } from "./service.js";
import { supportsLeases, type Unsubscribe } from "./store.js";
import type { InputRequest, InputResponse, JsonRpcErrorObject, TaskRecord } from "./task.js";

/** What a handler sees while it runs as a task. */
export interface TaskContext {
  readonly taskId: string;
  readonly owner: Owner;
  /** Aborted when cancellation is requested (from any node) or the task ends elsewhere. */
  readonly signal: AbortSignal;
  /**
   * Parks the task in `input_required` until every request is answered, and resolves with
   * the answers by the same names. Names may repeat across calls: the runner mints fresh
   * keys. Rejects with `signal.reason` if the task is cancelled meanwhile.
   */
  requireInput(
    requests: Readonly<Record<string, InputRequest>>,
    statusMessage?: string | null,
  ): Promise<Record<string, InputResponse>>;
  /** Updates the human-readable status message; a no-op once the task has ended. */
  setStatusMessage(statusMessage: string | null): Promise<void>;
  /**
   * Reports progress (e.g. 30 of 100). Not stored: it reaches listeners on this node
   * ({@link TaskRunner.onProgress}), such as the 2025-11-25 facade's `notifications/progress`.
   * Ignored once the task has ended, and when `progress` is not a finite number.
   */
  reportProgress(progress: number, total?: number, message?: string): void;
}

/** One progress report of a running task. */
export interface TaskProgress {
  readonly taskId: string;
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/** Receives progress reports. */
export type TaskProgressListener = (report: TaskProgress) => void;

/** A tool body run as a task: returns the tool result, or throws to fail the task. */
export type TaskHandler = (
  args: Readonly<Record<string, unknown>>,
  ctx: TaskContext,
) => Promise<Readonly<Record<string, unknown>>> | Readonly<Record<string, unknown>>;

/** What {@link TaskRunner.start} needs. */
export interface StartTaskInput extends CreateTaskInput {
  readonly handler: TaskHandler;
}

/** Settings of a {@link TaskRunner}. */
export interface TaskRunnerOptions {
  readonly service: TaskService;
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
   * Lease settings, used when the store implements `LeasingTaskStore`: `holder` names this
   * node (unique per process), the lease lasts `durationMs` (default 30 s) and is renewed
   * every `renewEveryMs` (default a third of it).
   */
  readonly lease?: {
    readonly holder: string;
    readonly durationMs?: number;
    readonly renewEveryMs?: number;
  };
}

/** The error a cancelled handler's signal carries. */
export class TaskCancelledError extends Error {
  override readonly name = "AbortError";
  constructor(taskId: string) {
    super(`Task ${taskId} was cancelled`);
  }
}

/**
 * Turns anything a handler throws into the JSON-RPC error the task fails with: the error's
 * own integer `code` (and `data`) when it has one, else -32603 Internal error.
 */
export function toJsonRpcError(thrown: unknown): JsonRpcErrorObject {
  if (typeof thrown === "object" && thrown !== null) {
    const { code, message, data } = thrown as { code?: unknown; message?: unknown; data?: unknown };
    const text = typeof message === "string" && message.length > 0 ? message : "Internal error";
    if (typeof code === "number" && Number.isInteger(code)) {
      return data === undefined ? { code, message: text } : { code, message: text, data };
    }
    return { code: -32603, message: text };
  }
  return { code: -32603, message: typeof thrown === "string" ? thrown : "Internal error" };
}

/**
 * Runs handlers as tasks, era-neutrally. Cancellation of either style reaches the handler
 * through `ctx.signal`, woken by the store's change feed, so a request that arrives on
 * another node works too:
 *
 * - immediate (`TaskService.cancelNow`, the 2025-11-25 era): the task is `cancelled` before
 *   the caller hears back; whatever the handler returns later is discarded.
 * - cooperative (`TaskService.requestCancel`, the 2026-07-28 era): the task ends `cancelled`
 *   if the handler stops on its signal (throws), or keeps the handler's outcome if that
 *   came first.
 */
export class TaskRunner {
  readonly service: TaskService;
  readonly #runs = new Map<string, Run>();
  readonly #progress = new ChangeFeed<TaskProgress>((error, report) =>
    this.#onError(error, report.taskId),
  );
  readonly #onError: (error: unknown, taskId: string) => void;
  readonly #settleAttempts: number;
  readonly #settleRetryMs: number;
  /** @internal */
  readonly recheckMs: number;
  /** @internal */
  readonly lease: { holder: string; durationMs: number; renewEveryMs: number } | undefined;

  constructor(options: TaskRunnerOptions) {
    this.service = options.service;
    this.#onError = options.onError ?? ((error, taskId) => console.error(`task ${taskId}:`, error));
    this.#settleAttempts = options.settleAttempts ?? 10;
    this.#settleRetryMs = options.settleRetryMs ?? 100;
    this.recheckMs = options.recheckMs ?? 30_000;
    if (options.lease && supportsLeases(this.service.store)) {
      const durationMs = options.lease.durationMs ?? 30_000;
      this.lease = {
        holder: options.lease.holder,
        durationMs,
        renewEveryMs: options.lease.renewEveryMs ?? Math.max(1, Math.floor(durationMs / 3)),
      };
    }
  }

  /** Creates the task durably, starts the handler in the background, returns the task. */
  async start(caller: Owner, input: StartTaskInput): Promise<TaskRecord> {
    const lease = this.lease && { holder: this.lease.holder, durationMs: this.lease.durationMs };
    const record = await this.service.create(caller, lease ? { ...input, lease } : input);
    const run = new Run(this, caller, record, input.handler);
    this.#runs.set(record.taskId, run);
    run.done = run.execute().finally(() => this.#runs.delete(record.taskId));
    return record;
  }

  /**
   * Subscribes to the progress reports of one task (or of every task when `taskId` is
   * absent) run by this runner. Reports are not stored, so only this node hears them.
   */
  onProgress(listener: TaskProgressListener, taskId?: string): Unsubscribe {
    return this.#progress.watch(listener, taskId);
  }

  /** @internal */
  emitProgress(report: TaskProgress): void {
    this.#progress.emit(report);
  }

  /** True when this runner holds leases on the tasks it runs (a leasing store and `lease` set). */
  get leasing(): boolean {
    return this.lease !== undefined;
  }

  /** How many handlers are running on this runner. */
  get active(): number {
    return this.#runs.size;
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

  /** Aborts every running handler's signal, e.g. on shutdown. */
  abortAll(reason?: unknown): void {
    for (const run of this.#runs.values()) run.abort(reason);
  }

  /**
   * Gives up the leases of every running task (on shutdown), so that other nodes see them
   * as orphaned at once instead of after the lease runs out.
   */
  async releaseLeases(): Promise<void> {
    await Promise.all([...this.#runs.values()].map((run) => run.releaseLease()));
  }

  /** @internal Reports an error no caller can receive. */
  reportError(error: unknown, taskId: string): void {
    this.#onError(error, taskId);
  }

  /** @internal Stores a handler's outcome, retrying while the store is unavailable. */
  async storeOutcome(taskId: string, write: () => Promise<unknown>): Promise<void> {
    let delay = this.#settleRetryMs;
    for (let attempt = 1; ; attempt++) {
      try {
        await write();
        return;
      } catch (error) {
        // Someone else ended the task first (an immediate cancel, or the task was removed):
        // the late outcome is discarded, never written over a terminal state.
        if (isTaskError(error, "invalid_transition")) return;
        if (isTaskError(error, "not_found_or_unauthorized")) return;
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

class Run {
  done: Promise<void> = Promise.resolve();
  readonly #runner: TaskRunner;
  readonly #caller: Owner;
  readonly #task: TaskRecord;
  readonly #handler: TaskHandler;
  readonly #controller = new AbortController();
  /** Input keys this run has used, so repeated names get fresh keys. */
  readonly #usedKeys = new Set<string>();
  /** Waiting `requireInput` calls, by key. */
  readonly #waiting = new Map<string, (response: InputResponse) => void>();
  #draining = false;
  #drainAgain = false;
  #leaseReleased = false;
  /** Set once the handler has returned or thrown. */
  #finished = false;

  constructor(runner: TaskRunner, caller: Owner, task: TaskRecord, handler: TaskHandler) {
    this.#runner = runner;
    this.#caller = caller;
    this.#task = task;
    this.#handler = handler;
  }

  abort(reason?: unknown): void {
    if (!this.#controller.signal.aborted) {
      this.#controller.abort(reason ?? new TaskCancelledError(this.#task.taskId));
    }
  }

  async execute(): Promise<void> {
    const { service } = this.#runner;
    const { taskId } = this.#task;
    const watching = new AbortController();
    void this.#watch(watching.signal);
    const renewal = this.#startLeaseRenewal();
    let result: Readonly<Record<string, unknown>> | undefined;
    let thrown: unknown;
    let threw = false;
    try {
      result = await this.#handler(this.#task.request.arguments, this.#context());
    } catch (error) {
      threw = true;
      thrown = error;
    } finally {
      this.#finished = true;
      watching.abort();
      if (renewal !== undefined) clearInterval(renewal);
    }
    const caller = this.#caller;
    if (!threw && (typeof result !== "object" || result === null || Array.isArray(result))) {
      threw = true;
      thrown = new Error("The tool handler returned no result object");
    }
    if (!threw) {
      await this.#runner.storeOutcome(taskId, () =>
        service.complete(caller, taskId, result as Readonly<Record<string, unknown>>),
      );
    } else if (this.#controller.signal.aborted) {
      // The handler stopped on its signal: acknowledge the cancellation.
      await this.#runner.storeOutcome(taskId, () => service.markCancelled(caller, taskId));
    } else {
      await this.#runner.storeOutcome(taskId, () =>
        service.fail(caller, taskId, toJsonRpcError(thrown)),
      );
    }
  }

  async releaseLease(): Promise<void> {
    const lease = this.#runner.lease;
    const { store } = this.#runner.service;
    if (!lease || !supportsLeases(store)) return;
    this.#leaseReleased = true;
    try {
      await store.releaseLease(
        this.#task.taskId,
        this.#runner.service.scope(this.#caller),
        lease.holder,
      );
    } catch (error) {
      this.#runner.reportError(error, this.#task.taskId);
    }
  }

  #startLeaseRenewal(): NodeJS.Timeout | undefined {
    const lease = this.#runner.lease;
    const { store } = this.#runner.service;
    if (!lease || !supportsLeases(store)) return undefined;
    const scope = this.#runner.service.scope(this.#caller);
    const timer = setInterval(() => {
      if (this.#leaseReleased) return;
      store.renewLease(this.#task.taskId, scope, lease.holder, lease.durationMs).then(
        (held) => {
          // The task ended elsewhere, or another node declared this worker lost.
          if (!held && !this.#leaseReleased) this.abort();
        },
        (error) => this.#runner.reportError(error, this.#task.taskId),
      );
    }, lease.renewEveryMs);
    timer.unref();
    return timer;
  }

  /**
   * Follows the task while the handler runs: a cancel request, a terminal status set
   * elsewhere or the task's removal aborts the handler; new answers are handed to waiting
   * `requireInput` calls. Only those changes cost a re-read; the periodic re-read
   * (`recheckMs`) covers notifications lost on the way.
   */
  async #watch(stop: AbortSignal): Promise<void> {
    const records = this.#runner.service.follow(this.#caller, this.#task.taskId, {
      signal: stop,
      after: this.#task,
      recheckMs: this.#runner.recheckMs,
      wakeOn: (change) =>
        change.kind === "cancel_requested" ||
        change.kind === "input_submitted" ||
        change.kind === "deleted" ||
        isTerminal(change.status),
    });
    try {
      for await (const task of records) {
        if (task.cancelRequestedAt !== null || isTerminal(task.status)) this.abort();
        else if (this.#waiting.size > 0 && Object.keys(task.inputResponses).length > 0) {
          void this.#drainInputs();
        }
      }
    } catch (error) {
      if (stop.aborted) return;
      if (isTaskError(error, "not_found_or_unauthorized")) this.abort(error);
      else this.#runner.reportError(error, this.#task.taskId);
    }
  }

  #context(): TaskContext {
    const { service } = this.#runner;
    const caller = this.#caller;
    const { taskId } = this.#task;
    const signal = this.#controller.signal;
    return {
      taskId,
      owner: caller,
      signal,
      requireInput: (requests, statusMessage) => this.#requireInput(requests, statusMessage),
      reportProgress: (progress, total, message) => {
        if (this.#finished || signal.aborted || !Number.isFinite(progress)) return;
        this.#runner.emitProgress({
          taskId,
          progress,
          ...(total !== undefined && Number.isFinite(total) && { total }),
          ...(message !== undefined && { message }),
        });
      },
      setStatusMessage: async (statusMessage) => {
        try {
          await service.setStatusMessage(caller, taskId, statusMessage);
        } catch (error) {
          if (!isTaskError(error, "invalid_transition")) throw error;
        }
      },
    };
  }

  async #requireInput(
    requests: Readonly<Record<string, InputRequest>>,
    statusMessage?: string | null,
  ): Promise<Record<string, InputResponse>> {
    const signal = this.#controller.signal;
    signal.throwIfAborted();
    const names = Object.keys(requests);
    const keyed: Record<string, InputRequest> = {};
    const keyOf = new Map<string, string>();
    for (const name of names) {
      let key = name;
      for (let n = 2; this.#usedKeys.has(key); n++) key = `${name}-${n}`;
      this.#usedKeys.add(key);
      keyed[key] = requests[name] as InputRequest;
      keyOf.set(name, key);
    }
    const answers = new Map<string, InputResponse>();
    const all = new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        for (const key of keyOf.values()) this.#waiting.delete(key);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      for (const key of keyOf.values()) {
        this.#waiting.set(key, (response) => {
          answers.set(key, response);
          if (answers.size === keyOf.size) {
            signal.removeEventListener("abort", onAbort);
            resolve();
          }
        });
      }
    });
    // A rejection before anyone awaits `all` must not surface as unhandled.
    all.catch(() => {});
    try {
      await this.#runner.service.requireInput(
        this.#caller,
        this.#task.taskId,
        keyed,
        statusMessage,
      );
    } catch (error) {
      for (const key of keyOf.values()) this.#waiting.delete(key);
      throw error;
    }
    await all;
    const out: Record<string, InputResponse> = {};
    for (const [name, key] of keyOf) out[name] = answers.get(key) as InputResponse;
    return out;
  }

  async #drainInputs(): Promise<void> {
    if (this.#draining) {
      this.#drainAgain = true;
      return;
    }
    this.#draining = true;
    try {
      do {
        this.#drainAgain = false;
        const { responses } = await this.#runner.service.takeInputResponses(
          this.#caller,
          this.#task.taskId,
        );
        for (const key of Object.keys(responses)) {
          const deliver = this.#waiting.get(key);
          if (deliver) {
            this.#waiting.delete(key);
            deliver(responses[key] as InputResponse);
          }
        }
      } while (this.#drainAgain);
    } catch (error) {
      if (isTaskError(error, "not_found_or_unauthorized")) {
        this.abort(error);
      } else {
        // The answers stay stored; try again shortly rather than leave the handler parked.
        this.#runner.reportError(error, this.#task.taskId);
        setTimeout(() => void this.#drainInputs(), 1000).unref();
      }
    } finally {
      this.#draining = false;
    }
  }
}
