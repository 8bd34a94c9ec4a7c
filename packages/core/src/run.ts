import { isTaskError } from "./errors.js";
import type { Owner } from "./owner.js";
import type { RunCollaborators, RunSettings } from "./run-collaborators.js";
import { InputRounds } from "./run-input.js";
import { armDeadline, RunLease } from "./run-lease.js";
import {
  deadlineOutcome,
  type HandlerEnd,
  handlerOutcome,
  type OutcomeWrite,
} from "./run-outcome.js";
import { RunSpan } from "./run-span.js";
import { RunStoppedError, RunStopState, TaskCancelledError } from "./run-stop.js";
import type { RunWriter } from "./run-writer.js";
import type { TaskChange, Unsubscribe } from "./store.js";
import type { TaskExecution, TaskRecord } from "./task.js";
import type { TaskContext, TaskHandler } from "./task-context.js";
import { isTerminal } from "./transitions.js";

/**
 * One run of one task on this node: the handler with its context, the watch that aborts
 * it (cancel request, the task ending elsewhere, the run being superseded), its lease and
 * deadline (`run-lease.ts`), its input rounds (`run-input.ts`), its span (`run-span.ts`),
 * and the outcome written through the run's fence (`run-outcome.ts`) — or, when the retry
 * policy allows, the task handed back to the queue for another attempt.
 */
export class Run {
  done: Promise<void> = Promise.resolve();
  readonly taskId: string;
  /** The owner of the task this run runs. */
  readonly owner: Owner;
  readonly #settings: RunSettings;
  readonly #with: RunCollaborators;
  readonly #task: TaskRecord;
  readonly #handler: TaskHandler;
  readonly #writer: RunWriter;
  /**
   * The handler's signal's controller. Its signal is made only when read (`ctx.signal`, an
   * input round, a retried write): on Node 20 making one costs 5–8 µs, 4 % of the CPU of a
   * task-creating `tools/call` on the memory store, for handlers that never look at it.
   */
  readonly #controller = new AbortController();
  /** Whether {@link abort} ran (read without making the signal). */
  #aborted = false;
  readonly #stop = new RunStopState();
  readonly #lease: RunLease;
  /**
   * The run's input rounds, made at the handler's first `requireInput` (most handlers never
   * ask); until then {@link #latest} keeps what they start from.
   */
  #inputs: InputRounds | undefined;
  /** The newest record the watch read, while there are no input rounds to hand it to. */
  #latest: TaskRecord;
  /** This run's span, from {@link execute} until the run is over. */
  #span: RunSpan | undefined;
  /** The record the run's outcome wrote, when it wrote one. */
  #written: TaskRecord | undefined;

  constructor(
    collaborators: RunCollaborators,
    task: TaskRecord,
    handler: TaskHandler,
    writer: RunWriter,
  ) {
    const settings = collaborators.settings;
    this.#settings = settings;
    this.#with = collaborators;
    this.#task = task;
    this.#latest = task;
    this.taskId = task.taskId;
    this.owner = task.owner;
    this.#handler = handler;
    this.#writer = writer;
    const { leaseMs, renewEveryMs, retryMs } = settings;
    this.#lease = new RunLease(
      { leaseMs, renewEveryMs, retryMs, leased: settings.service.queues },
      writer,
      {
        outcomeDecided: () => this.#stop.outcomeDecided,
        leaseExpired: () => this.abort(new RunStoppedError(this.taskId, "lease_expired")),
        leaseLost: () => void this.#lostHold(),
        reportError: (error) => collaborators.reports.error(error, this.taskId),
      },
    );
  }

  /** The run's input rounds, made now if the handler has not asked before. */
  #rounds(): InputRounds {
    if (this.#inputs !== undefined) return this.#inputs;
    const controller = this.#controller;
    const latest = this.#latest;
    const rounds = new InputRounds(latest, {
      get signal() {
        return controller.signal;
      },
      writer: this.#writer,
      keepTrying: (write) => this.#lease.keepTrying(write, controller.signal),
      asked: (keys, status) => {
        this.#span?.noteInput("requested", keys);
        this.#span?.noteStatus(status);
      },
      answered: (keys) => this.#span?.noteInput("received", keys),
      waiting: (waiting) => this.#with.slots.waitingForInput(this, waiting),
      superseded: () => this.abort(new RunStoppedError(this.taskId, "superseded")),
    });
    // Answers the watch read before: taken in as the rounds would have taken them.
    if (latest !== this.#task) rounds.update(latest);
    this.#inputs = rounds;
    return rounds;
  }

  get execution(): TaskExecution {
    return this.#task.execution;
  }

  /** Aborts the handler's signal (once); a {@link RunStoppedError} also discards its outcome. */
  abort(reason?: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    if (reason instanceof RunStoppedError) {
      if (reason.reason !== "deadline") this.#stop.outcomeDecided = true;
      this.#with.reports.stopped(reason.reason);
      this.#stop.stoppedBy = reason.reason;
    }
    this.#controller.abort(reason ?? new TaskCancelledError(this.taskId));
  }

  /** Hands the task back to the queue (shutdown): the attempt does not count. */
  async handBack(): Promise<void> {
    this.#stop.outcomeDecided = true;
    try {
      await this.#writer.releaseLease();
    } catch (error) {
      this.#with.reports.error(error, this.taskId);
    }
    this.abort(new RunStoppedError(this.taskId, "handed_back"));
  }

  /** Runs the handler and stores its outcome, traced as this run's `mcp.task.run` span. */
  async execute(): Promise<void> {
    this.#span = new RunSpan(this.#settings.tracer, this.#task, this.#settings.holder);
    try {
      await this.#execute();
    } finally {
      this.#span.end(this.#written, this.#stop.unwrittenOutcome);
    }
  }

  async #execute(): Promise<void> {
    if (this.#task.cancelRequestedAt !== null) {
      // Cancelled while queued: acknowledge without running.
      await this.#storeOutcome(() => this.#writer.markCancelled());
      return;
    }
    const stopWatching = this.#watch();
    this.#lease.start();
    const deadline = armDeadline(this.execution.deadlineMs, () => this.#deadlinePassed());
    let end: HandlerEnd;
    try {
      end = {
        threw: false,
        result: await this.#handler(this.#task.request.arguments, this.#context()),
      };
    } catch (thrown) {
      end = { threw: true, thrown };
    } finally {
      stopWatching();
      this.#lease.stop();
      if (deadline !== undefined) clearTimeout(deadline);
      this.#with.slots.handlerReturned(this);
    }
    if (!this.#stop.decide()) return;
    const cancelled = this.#aborted;
    const report = (error: unknown) => this.#with.reports.error(error, this.taskId);
    await this.#storeOutcome(handlerOutcome(this.#writer, this.execution, end, cancelled, report));
  }

  /** Stores the run's outcome (retried by the runner), remembering what it wrote. */
  #storeOutcome(write: OutcomeWrite): Promise<void> {
    return this.#with.outcomes.store(this, async () => {
      this.#written = await write();
      return this.#written;
    });
  }

  /**
   * Past the deadline the run is over whatever the handler does: the task is requeued or
   * failed at once, and the handler's signal fires (its late outcome is discarded).
   */
  #deadlinePassed(): void {
    if (!this.#stop.decide()) return;
    this.abort(new RunStoppedError(this.taskId, "deadline"));
    void this.#storeOutcome(
      deadlineOutcome(this.#writer, this.execution, () => this.#cancelRequested()),
    );
  }

  /** Whether the task's cancellation was requested: seen by the watch, or read now. */
  async #cancelRequested(): Promise<boolean> {
    if (this.#stop.cancelSeen) return true;
    const task = await this.#settings.service.get(this.owner, this.taskId);
    return task.cancelRequestedAt !== null;
  }

  /**
   * Follows the task while the handler runs: a cancel request, a terminal status set
   * elsewhere, the task's removal or another run taking it over aborts the handler; new
   * answers go to waiting `requireInput` calls. Only those changes cost a re-read; the
   * periodic re-read (`recheckMs`) covers notifications lost on the way. Callbacks, not an
   * iterable stopped by a signal: that cost 15 % of the CPU of a task run on the memory
   * store. Returns what stops it (when the handler returns).
   */
  #watch(): Unsubscribe {
    const { holder, fencingToken } = this.execution;
    const { service, recheckMs } = this.#settings;
    const wakeOn = (change: TaskChange) =>
      change.kind === "cancel_requested" ||
      change.kind === "input_submitted" ||
      change.kind === "deleted" ||
      change.kind === "claimed" ||
      change.kind === "queued" ||
      isTerminal(change.status);
    const record = (task: TaskRecord) => {
      const e = task.execution;
      if (this.#endedElsewhere(task)) {
        // Nothing is left for this run to write.
      } else if (service.queues && (e.holder !== holder || e.fencingToken !== fencingToken)) {
        this.abort(new RunStoppedError(this.taskId, "superseded"));
      } else if (task.cancelRequestedAt !== null || isTerminal(task.status)) {
        if (task.cancelRequestedAt !== null) this.#stop.cancelSeen = true;
        this.abort();
      } else {
        this.#span?.noteStatus(task.status);
        if (this.#inputs !== undefined) this.#inputs.update(task);
        else this.#latest = task;
      }
    };
    const end = (failed: boolean, error: unknown) => {
      if (!failed) return;
      if (isTaskError(error, "not_found_or_unauthorized")) this.abort(error);
      else this.#with.reports.error(error, this.taskId);
    };
    return service.subscribe(
      this.owner,
      this.taskId,
      { record, end },
      { after: this.#task, recheckMs, wakeOn },
    );
  }

  /**
   * Whether the task was cancelled outright (the 2025-11-25 `tasks/cancel`) while this run
   * held it: the run stops as cancelled, with nothing to write and no take-over to count
   * (the lease ends with the task, which is not another run taking it over).
   */
  #endedElsewhere(task: TaskRecord): boolean {
    if (
      task.status !== "cancelled" ||
      task.execution.fencingToken !== this.execution.fencingToken
    ) {
      return false;
    }
    if (!this.#aborted) {
      this.#stop.outcomeDecided = true;
      this.#stop.endedElsewhereAs = task.status;
      this.abort();
    }
    return true;
  }

  /** A lease renewal found the task no longer held by this run: cancelled, or taken over. */
  async #lostHold(): Promise<void> {
    let task: TaskRecord | undefined;
    try {
      task = await this.#settings.service.get(this.owner, this.taskId);
    } catch (error) {
      if (isTaskError(error, "not_found_or_unauthorized")) {
        this.abort(error);
        return;
      }
    }
    if (this.#stop.outcomeDecided || (task !== undefined && this.#endedElsewhere(task))) return;
    this.abort(new RunStoppedError(this.taskId, "superseded"));
  }

  #context(): TaskContext {
    const controller = this.#controller;
    const { taskId } = this;
    return {
      taskId,
      owner: this.owner,
      get signal() {
        return controller.signal;
      },
      attempt: this.execution.attempt,
      worker: this.#settings.holder,
      requireInput: (requests, statusMessage) => this.#rounds().require(requests, statusMessage),
      reportProgress: (progress, total, message) => {
        if (this.#stop.outcomeDecided || this.#aborted || !Number.isFinite(progress)) return;
        this.#with.reports.progress({
          taskId,
          progress,
          ...(total !== undefined && Number.isFinite(total) && { total }),
          ...(message !== undefined && { message }),
        });
      },
      setStatusMessage: async (statusMessage) => {
        try {
          await this.#lease.keepTrying(
            () => this.#writer.setStatusMessage(statusMessage),
            controller.signal,
          );
        } catch (error) {
          if (isTaskError(error, "lease_lost")) {
            this.abort(new RunStoppedError(taskId, "superseded"));
          } else if (!isTaskError(error, "invalid_transition")) throw error;
        }
      },
    };
  }
}
