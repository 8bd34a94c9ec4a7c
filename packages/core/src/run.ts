import { ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, type Tracer } from "@opentelemetry/api";
import { clientViewOf, isTaskError } from "./errors.js";
import type { Owner } from "./owner.js";
import { CANCELLED_WITHOUT_RUN_MESSAGE, nextAttempt } from "./retry-policy.js";
import type { RunWriter } from "./run-writer.js";
import type { TaskService } from "./service.js";
import {
  INTERNAL_ERROR_CODE,
  type InputRequest,
  type InputResponse,
  type JsonRpcErrorObject,
  type TaskExecution,
  type TaskRecord,
} from "./task.js";
import type { TaskContext, TaskHandler, TaskProgress } from "./task-context.js";
import { TASK_SPAN_ATTRIBUTES, TASK_SPAN_NAMES, withRemoteParent } from "./tracing.js";
import { isTerminal } from "./transitions.js";

/** Why a run stops following its task: the handler returned (or threw). */
const HANDLER_RETURNED = Object.freeze(new Error("the handler returned"));
/** The error a cancelled handler's signal carries. */
export class TaskCancelledError extends Error {
  override readonly name = "AbortError";
  constructor(taskId: string) {
    super(`Task ${taskId} was cancelled`);
  }
}

/**
 * Why a run stopped other than by cancellation: its deadline passed, another run
 * superseded it (its lease was lost), its worker handed it back on shutdown, or its lease
 * ran out while the store could not be reached to renew it (`lease_expired`: the task is
 * then recovered like any lost worker's, by its retry policy). None of these is the
 * handler's outcome: the run's result, if any, is discarded.
 */
export class RunStoppedError extends Error {
  override readonly name = "AbortError";
  readonly reason: "deadline" | "superseded" | "handed_back" | "lease_expired";
  constructor(taskId: string, reason: RunStoppedError["reason"]) {
    super(
      reason === "deadline"
        ? `Task ${taskId} ran past its deadline`
        : reason === "superseded"
          ? `Task ${taskId} is now run elsewhere: this run lost its lease`
          : reason === "lease_expired"
            ? `Task ${taskId} stopped: its lease ran out while the task store was unavailable`
            : `Task ${taskId} was handed back to the queue by a stopping worker`,
    );
    this.reason = reason;
  }
}

/** The longest wait between two tries of a run's write while the store is unavailable. */
const MAX_OUTAGE_RETRY_MS = 1_000;

/**
 * Turns anything a handler throws into the JSON-RPC error the task fails with: the error's
 * own integer `code` (and `data`) when it has one, else -32603 Internal error. A
 * `store_unavailable` task error names its cause (driver text, errno, the database's
 * address): the task gets the words clients get for such an outage instead
 * (`STORE_UNAVAILABLE_MESSAGE`, `data.reason` and `data.retryAfterMs`); whoever stores
 * the error reports the detail (the runner, to `onError`).
 */
export function toJsonRpcError(thrown: unknown): JsonRpcErrorObject {
  if (isTaskError(thrown, "store_unavailable")) {
    const { message, data } = clientViewOf(thrown);
    return { code: INTERNAL_ERROR_CODE, message, data };
  }
  if (typeof thrown === "object" && thrown !== null) {
    const { code, message, data } = thrown as { code?: unknown; message?: unknown; data?: unknown };
    const text = typeof message === "string" && message.length > 0 ? message : "Internal error";
    if (typeof code === "number" && Number.isInteger(code)) {
      return data === undefined ? { code, message: text } : { code, message: text, data };
    }
    return { code: INTERNAL_ERROR_CODE, message: text };
  }
  return {
    code: INTERNAL_ERROR_CODE,
    message: typeof thrown === "string" ? thrown : "Internal error",
  };
}

/** What a {@link Run} needs from the runner that owns it. */
export interface RunHost {
  readonly service: TaskService;
  /** This worker's name (the lease holder). */
  readonly holder: string;
  readonly leaseMs: number;
  readonly renewEveryMs: number;
  readonly recheckMs: number;
  /** First wait before a run's write is tried again while the store is unavailable. */
  readonly retryMs: number;
  /** Where the run spans go. */
  readonly tracer: Tracer;
  emitProgress(report: TaskProgress): void;
  /** Counts a run stopped without an outcome of its own. */
  countStop(reason: RunStoppedError["reason"]): void;
  reportError(error: unknown, taskId: string): void;
  /** The handler has returned (or thrown): the run holds no slot while it stores its outcome. */
  handlerReturned(run: Run): void;
  /**
   * The handler waits for input (`waiting`, after the question is stored) or goes on (its
   * answers came, or the wait was aborted): a waiting run need not hold a handler slot.
   */
  waitingForInput(run: Run, waiting: boolean): void;
  /** Stores a run's outcome, retrying while the store is unavailable. */
  storeOutcome(run: Run, write: () => Promise<unknown>): Promise<void>;
}

/**
 * One run of one task on this node: the handler with its context, the watch that aborts
 * it (cancel request, the task ending elsewhere, the run being superseded), lease renewal,
 * the deadline, and the outcome written through the run's fence — or, when the policy
 * allows and attempts remain, the task handed back to the queue for another attempt.
 */
export class Run {
  done: Promise<void> = Promise.resolve();
  readonly taskId: string;
  readonly #host: RunHost;
  readonly #task: TaskRecord;
  readonly #owner: Owner;
  /** The owner of the task this run runs. */
  get owner(): Owner {
    return this.#owner;
  }
  readonly #handler: TaskHandler;
  readonly #writer: RunWriter;
  readonly #controller = new AbortController();
  /** Input keys this run has used, so repeated names get fresh keys (the same on a re-run). */
  readonly #usedKeys = new Set<string>();
  /** Waiting `requireInput` calls, by key. */
  readonly #waiting = new Map<string, (response: InputResponse) => void>();
  /** Answers known so far, by key, including those given to earlier runs of the task. */
  #answers: Readonly<Record<string, InputResponse>>;
  /** The latest record's received-but-not-taken answers. */
  #pendingResponses: Readonly<Record<string, InputResponse>> = {};
  /** Set once the run's outcome is decided (by the handler, or by the deadline). */
  #settled = false;
  /** `requireInput` calls waiting on stored questions. */
  #inputWaits = 0;
  /** This run's span (`mcp.task.run`), from {@link execute} until the run is over. */
  #span: Span | undefined;
  /** The status last recorded on the span, to add an event only when it changes. */
  #spanStatus: TaskRecord["status"];
  /** The record the run's outcome wrote, when it wrote one. */
  #written: TaskRecord | undefined;
  /** Why the run stopped without an outcome of its own, when it did. */
  #stopReason: RunStoppedError["reason"] | undefined;
  /**
   * Until when (`performance.now()` time) this run holds its lease as far as it knows: from
   * its start, then from each renewal that succeeded (counted from when it was sent).
   */
  #leaseUntil: number;
  /** A renewal is in flight. */
  #renewing = false;
  /** The last renewal failed because the store could not be reached (none got through since). */
  #renewFailing = false;
  /** The wait before the next try of a renewal the store could not take. */
  #renewRetryMs: number;
  /** The watch saw the task's cancellation requested. */
  #cancelSeen = false;
  /** The status the task was given elsewhere while this run held it (an immediate cancel). */
  #endedAs: TaskRecord["status"] | undefined;

  constructor(host: RunHost, task: TaskRecord, handler: TaskHandler, writer: RunWriter) {
    this.#host = host;
    this.#task = task;
    this.taskId = task.taskId;
    this.#owner = task.owner;
    this.#handler = handler;
    this.#writer = writer;
    this.#answers = task.inputAnswers;
    this.#spanStatus = task.status;
    this.#leaseUntil = performance.now() + host.leaseMs;
    this.#renewRetryMs = host.retryMs;
  }

  get execution(): TaskExecution {
    return this.#task.execution;
  }

  /** Aborts the handler's signal (once); a {@link RunStoppedError} also discards its outcome. */
  abort(reason?: unknown): void {
    if (this.#controller.signal.aborted) return;
    if (reason instanceof RunStoppedError) {
      if (reason.reason !== "deadline") this.#settled = true;
      this.#host.countStop(reason.reason);
      this.#stopReason = reason.reason;
    }
    this.#controller.abort(reason ?? new TaskCancelledError(this.taskId));
  }

  /** Hands the task back to the queue (shutdown): the attempt does not count. */
  async handBack(): Promise<void> {
    this.#settled = true;
    try {
      await this.#writer.releaseLease();
    } catch (error) {
      this.#host.reportError(error, this.taskId);
    }
    this.abort(new RunStoppedError(this.taskId, "handed_back"));
  }

  /** Runs the handler and stores its outcome, traced as this run's `mcp.task.run` span. */
  async execute(): Promise<void> {
    this.#span = this.#startSpan();
    try {
      await this.#execute();
    } finally {
      this.#endSpan();
    }
  }

  async #execute(): Promise<void> {
    if (this.#task.cancelRequestedAt !== null) {
      // Cancelled while queued: acknowledge without running.
      await this.#storeOutcome(() => this.#writer.markCancelled());
      return;
    }
    const watching = new AbortController();
    void this.#watch(watching.signal);
    const renewal = this.#startLeaseRenewal();
    const leaseEnd = this.#startLeaseEnd();
    const deadline = this.#startDeadline();
    let result: Readonly<Record<string, unknown>> | undefined;
    let thrown: unknown;
    let threw = false;
    try {
      result = await this.#handler(this.#task.request.arguments, this.#context());
    } catch (error) {
      threw = true;
      thrown = error;
    } finally {
      // A reason of our own: abort() without one builds a DOMException (and its stack) per run.
      watching.abort(HANDLER_RETURNED);
      if (renewal !== undefined) clearInterval(renewal);
      if (leaseEnd !== undefined) clearTimeout(leaseEnd.timer);
      if (deadline !== undefined) clearTimeout(deadline);
      this.#host.handlerReturned(this);
    }
    if (this.#settled) return;
    this.#settled = true;
    if (!threw && (typeof result !== "object" || result === null || Array.isArray(result))) {
      threw = true;
      thrown = new Error("The tool handler returned no result object");
    }
    const writer = this.#writer;
    if (!threw) {
      const value = result as Readonly<Record<string, unknown>>;
      await this.#storeOutcome(() => orRefused(writer.complete(value), "result"));
    } else if (this.#controller.signal.aborted) {
      // The handler stopped on its signal: acknowledge the cancellation.
      await this.#storeOutcome(() => writer.markCancelled());
    } else {
      // The detail of an outage goes to the logs; the task keeps only the client's words.
      if (isTaskError(thrown, "store_unavailable")) this.#host.reportError(thrown, this.taskId);
      const next = nextAttempt(this.execution, { kind: "failed", error: toJsonRpcError(thrown) });
      await this.#storeOutcome(() =>
        next.retry
          ? writer.requeue(next.statusMessage)
          : orRefused(writer.fail(next.error), "error"),
      );
    }

    /**
     * The store refusing the outcome itself (PostgreSQL's jsonb cannot hold U+0000, say) must
     * not leave the task unfinished until its lease runs out: it fails, saying why.
     */
    async function orRefused(write: Promise<TaskRecord>, what: string): Promise<TaskRecord> {
      try {
        return await write;
      } catch (refused) {
        if (!isTaskError(refused, "invalid_task")) throw refused;
        return writer.fail({
          code: INTERNAL_ERROR_CODE,
          message: `The tool's ${what} could not be stored: ${refused.message}`,
        });
      }
    }
  }

  /** Stores the run's outcome (retried by the host), remembering what it wrote. */
  #storeOutcome(write: () => Promise<TaskRecord>): Promise<void> {
    return this.#host.storeOutcome(this, async () => {
      this.#written = await write();
      return this.#written;
    });
  }

  /**
   * The run's span: a child of the context stored with the task (its creation, possibly on
   * another node), else the root of a new trace — never of whatever happened to be active
   * when the task was claimed.
   */
  #startSpan(): Span {
    const task = this.#task;
    const A = TASK_SPAN_ATTRIBUTES;
    return this.#host.tracer.startSpan(
      TASK_SPAN_NAMES.run,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          [A.taskId]: task.taskId,
          [A.toolName]: task.request.toolName,
          [A.era]: task.era,
          [A.status]: task.status,
          [A.attempt]: task.execution.attempt,
          [A.worker]: this.#host.holder,
        },
      },
      withRemoteParent(task.traceContext, ROOT_CONTEXT),
    );
  }

  /** Adds a `mcp.task.status` event when the task's status differs from the last one seen. */
  #noteStatus(status: TaskRecord["status"]): void {
    if (status === this.#spanStatus) return;
    this.#spanStatus = status;
    const span = this.#span;
    if (span?.isRecording())
      span.addEvent("mcp.task.status", { [TASK_SPAN_ATTRIBUTES.status]: status });
  }

  /** Adds an input-round event (`mcp.task.input_requested` / `mcp.task.input_received`). */
  #noteInput(event: "requested" | "received", keys: readonly string[]): void {
    const span = this.#span;
    if (span?.isRecording())
      span.addEvent(`mcp.task.input_${event}`, { "mcp.task.input.keys": [...keys] });
  }

  /** Ends the span with the run's outcome: what it wrote, or why it stopped without. */
  #endSpan(): void {
    const span = this.#span;
    if (span === undefined) return;
    this.#span = undefined;
    if (span.isRecording()) {
      const written = this.#written;
      const A = TASK_SPAN_ATTRIBUTES;
      let outcome: string;
      if (written !== undefined) {
        span.addEvent("mcp.task.status", { [A.status]: written.status });
        span.setAttribute(A.status, written.status);
        outcome = written.status === "working" ? "requeued" : written.status;
        if (outcome === "failed" || outcome === "requeued") {
          const message =
            written.outcome?.kind === "error"
              ? written.outcome.error.message
              : written.statusMessage;
          span.setStatus({ code: SpanStatusCode.ERROR, ...(message && { message }) });
        }
      } else {
        // Superseded, handed back, or ended elsewhere first (an immediate cancel).
        outcome = this.#stopReason ?? this.#endedAs ?? "discarded";
      }
      span.setAttribute(A.outcome, outcome);
    }
    span.end();
  }

  /**
   * Past the deadline the run is over whatever the handler does: the task is requeued or
   * failed at once, and the handler's signal fires (its late outcome is discarded).
   */
  #startDeadline(): NodeJS.Timeout | undefined {
    const { deadlineMs } = this.execution;
    if (deadlineMs === null) return undefined;
    const timer = setTimeout(() => {
      if (this.#settled) return;
      this.#settled = true;
      this.abort(new RunStoppedError(this.taskId, "deadline"));
      const writer = this.#writer;
      const next = nextAttempt(this.execution, { kind: "expired" });
      // A recorded cancel request wins: a requeue of such a task ends it cancelled (in the
      // store, atomically); a last attempt is checked here before it fails.
      void this.#storeOutcome(async () =>
        next.retry
          ? writer.requeue(next.statusMessage)
          : (await this.#cancelRequested())
            ? writer.markCancelled(CANCELLED_WITHOUT_RUN_MESSAGE)
            : writer.fail(next.error),
      );
    }, deadlineMs);
    timer.unref();
    return timer;
  }

  /** Whether the task's cancellation was requested: seen by the watch, or read now. */
  async #cancelRequested(): Promise<boolean> {
    if (this.#cancelSeen) return true;
    const task = await this.#host.service.get(this.#owner, this.taskId);
    return task.cancelRequestedAt !== null;
  }

  #startLeaseRenewal(): NodeJS.Timeout | undefined {
    if (!this.#host.service.queues) return undefined;
    const timer = setInterval(() => this.#renew(), this.#host.renewEveryMs);
    timer.unref();
    return timer;
  }

  /**
   * Renews the lease once. A store that cannot be reached is tried again soon, with backoff
   * (not only at the next interval), so a blip shorter than the lease costs nothing.
   */
  #renew(): void {
    if (this.#settled || this.#renewing) return;
    this.#renewing = true;
    const sentAt = performance.now();
    this.#writer.renewLease(this.#host.leaseMs).then(
      (held) => {
        this.#renewing = false;
        if (held) {
          this.#leaseUntil = Math.max(this.#leaseUntil, sentAt + this.#host.leaseMs);
          this.#renewRetryMs = this.#host.retryMs;
          this.#renewFailing = false;
        } else if (!this.#settled) {
          // The task ended elsewhere, or another run took it over: a read says which.
          void this.#lostHold();
        }
      },
      (error) => {
        this.#renewing = false;
        this.#host.reportError(error, this.taskId);
        if (!isTaskError(error, "store_unavailable") || this.#settled) return;
        this.#renewFailing = true;
        if (performance.now() >= this.#leaseUntil) {
          this.abort(new RunStoppedError(this.taskId, "lease_expired"));
          return;
        }
        const wait = Math.min(this.#renewRetryMs, this.#host.renewEveryMs);
        this.#renewRetryMs = Math.min(this.#renewRetryMs * 2, MAX_OUTAGE_RETRY_MS);
        setTimeout(() => this.#renew(), wait).unref();
      },
    );
  }

  /**
   * Stops the run when its lease runs out because renewals could not get through (the
   * store stayed unavailable, or this node lost its link to it): another node may recover
   * the task by then, so the handler must not go on (its outcome would be fenced out
   * anyway). The task is left to orphan recovery, which applies its retry policy. A lease
   * that ran out with no outage in sight (this process stalled: SIGSTOP, a blocked event
   * loop) is renewed at once instead: the store then says whether another run took over.
   */
  #startLeaseEnd(): { timer: NodeJS.Timeout } | undefined {
    if (!this.#host.service.queues) return undefined;
    const handle = { timer: undefined as unknown as NodeJS.Timeout };
    const arm = (ms: number) => {
      handle.timer = setTimeout(() => {
        if (this.#settled) return;
        const left = this.#leaseUntil - performance.now();
        if (left > 0) arm(left);
        else if (this.#renewFailing) this.abort(new RunStoppedError(this.taskId, "lease_expired"));
        else {
          this.#renew();
          arm(Math.max(1, this.#host.retryMs));
        }
      }, ms);
      handle.timer.unref();
    };
    arm(Math.max(0, this.#leaseUntil - performance.now()));
    return handle;
  }

  /**
   * One write the handler asked for (a status message, input requests), tried again with
   * backoff while the store is unavailable: for as long as this run holds its lease (a
   * store without leases: for a lease's length). When the lease runs out first the run has
   * stopped, and the write rejects with the reason (a {@link RunStoppedError}).
   */
  async #ride<T>(write: () => Promise<T>): Promise<T> {
    const signal = this.#controller.signal;
    const until = this.#host.service.queues
      ? () => this.#leaseUntil
      : (
          (end) => () =>
            end
        )(performance.now() + this.#host.leaseMs);
    let delay = this.#host.retryMs;
    for (;;) {
      try {
        return await write();
      } catch (error) {
        if (!isTaskError(error, "store_unavailable")) throw error;
        // Cancelled or stopped meanwhile: the handler hears that, not the outage.
        signal.throwIfAborted();
        const left = until() - performance.now();
        if (left <= 0) {
          if (!this.#host.service.queues) throw error;
          this.abort(new RunStoppedError(this.taskId, "lease_expired"));
          signal.throwIfAborted();
        }
        await pause(Math.min(delay, Math.max(left, 1)), signal);
        delay = Math.min(delay * 2, MAX_OUTAGE_RETRY_MS);
      }
    }
  }

  /**
   * Follows the task while the handler runs: a cancel request, a terminal status set
   * elsewhere, the task's removal or another run taking it over aborts the handler; new
   * answers go to waiting `requireInput` calls. Only those changes cost a re-read; the
   * periodic re-read (`recheckMs`) covers notifications lost on the way.
   */
  async #watch(stop: AbortSignal): Promise<void> {
    const { holder, fencingToken } = this.execution;
    const records = this.#host.service.follow(this.#owner, this.taskId, {
      signal: stop,
      after: this.#task,
      recheckMs: this.#host.recheckMs,
      wakeOn: (change) =>
        change.kind === "cancel_requested" ||
        change.kind === "input_submitted" ||
        change.kind === "deleted" ||
        change.kind === "claimed" ||
        change.kind === "queued" ||
        isTerminal(change.status),
    });
    try {
      for await (const task of records) {
        const e = task.execution;
        if (this.#endedElsewhere(task)) {
          // Nothing is left for this run to write.
        } else if (
          this.#host.service.queues &&
          (e.holder !== holder || e.fencingToken !== fencingToken)
        ) {
          this.abort(new RunStoppedError(this.taskId, "superseded"));
        } else if (task.cancelRequestedAt !== null || isTerminal(task.status)) {
          if (task.cancelRequestedAt !== null) this.#cancelSeen = true;
          this.abort();
        } else {
          this.#noteStatus(task.status);
          this.#answers = task.inputAnswers;
          this.#pendingResponses = task.inputResponses;
          this.#deliverAnswers();
        }
      }
    } catch (error) {
      if (stop.aborted) return;
      if (isTaskError(error, "not_found_or_unauthorized")) this.abort(error);
      else this.#host.reportError(error, this.taskId);
    }
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
    if (!this.#controller.signal.aborted) {
      this.#settled = true;
      this.#endedAs = task.status;
      this.abort();
    }
    return true;
  }

  /** A lease renewal found the task no longer held by this run: cancelled, or taken over. */
  async #lostHold(): Promise<void> {
    let task: TaskRecord | undefined;
    try {
      task = await this.#host.service.get(this.#owner, this.taskId);
    } catch (error) {
      if (isTaskError(error, "not_found_or_unauthorized")) {
        this.abort(error);
        return;
      }
    }
    if (this.#settled || (task !== undefined && this.#endedElsewhere(task))) return;
    this.abort(new RunStoppedError(this.taskId, "superseded"));
  }

  #deliverAnswers(): void {
    let delivered = false;
    for (const [key, deliver] of [...this.#waiting]) {
      const answer = this.#answers[key];
      if (answer !== undefined) {
        this.#waiting.delete(key);
        deliver(answer);
        delivered = true;
      }
    }
    // The answers are kept in `inputAnswers`; the received-but-not-taken list is drained
    // so it says what it means (nothing is waiting to be picked up).
    if (delivered && Object.keys(this.#pendingResponses).length > 0) {
      this.#writer.takeInputResponses().catch(() => {});
    }
  }

  #context(): TaskContext {
    const signal = this.#controller.signal;
    const { taskId } = this;
    return {
      taskId,
      owner: this.#owner,
      signal,
      attempt: this.execution.attempt,
      worker: this.#host.holder,
      requireInput: (requests, statusMessage) => this.#requireInput(requests, statusMessage),
      reportProgress: (progress, total, message) => {
        if (this.#settled || signal.aborted || !Number.isFinite(progress)) return;
        this.#host.emitProgress({
          taskId,
          progress,
          ...(total !== undefined && Number.isFinite(total) && { total }),
          ...(message !== undefined && { message }),
        });
      },
      setStatusMessage: async (statusMessage) => {
        try {
          await this.#ride(() => this.#writer.setStatusMessage(statusMessage));
        } catch (error) {
          if (isTaskError(error, "lease_lost")) {
            this.abort(new RunStoppedError(taskId, "superseded"));
          } else if (!isTaskError(error, "invalid_transition")) throw error;
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
    const keyOf = new Map<string, string>();
    const missing: Record<string, InputRequest> = {};
    for (const name of Object.keys(requests)) {
      let key = name;
      for (let n = 2; this.#usedKeys.has(key); n++) key = `${name}-${n}`;
      this.#usedKeys.add(key);
      keyOf.set(name, key);
      // Answered before (by an earlier run of the task): not asked again.
      if (this.#answers[key] === undefined) missing[key] = requests[name] as InputRequest;
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
    if (Object.keys(missing).length > 0) {
      try {
        const task = await this.#ride(() => this.#writer.requireInput(missing, statusMessage));
        this.#answers = task.inputAnswers;
        this.#noteInput("requested", Object.keys(missing));
        this.#noteStatus(task.status);
      } catch (error) {
        for (const key of keyOf.values()) this.#waiting.delete(key);
        if (isTaskError(error, "lease_lost")) {
          this.abort(new RunStoppedError(this.taskId, "superseded"));
        }
        throw error;
      }
    }
    this.#deliverAnswers();
    const parked = Object.keys(missing).length > 0;
    if (parked && this.#inputWaits++ === 0) this.#host.waitingForInput(this, true);
    try {
      await all;
    } finally {
      if (parked && --this.#inputWaits === 0) this.#host.waitingForInput(this, false);
    }
    this.#noteInput("received", [...keyOf.values()]);
    const out: Record<string, InputResponse> = {};
    for (const [name, key] of keyOf) out[name] = answers.get(key) as InputResponse;
    return out;
  }
}

/** Waits `ms`, or until `signal` aborts (resolving either way: the caller checks). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
