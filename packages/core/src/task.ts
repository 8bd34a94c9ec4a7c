import type { OwnerLimits } from "./fairness.js";
import type { Owner } from "./owner.js";
import type { TraceContext } from "./trace-context.js";

/** The five task statuses, shared by both protocol eras. */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** Every status, in lifecycle order. */
export const TASK_STATUSES: readonly TaskStatus[] = Object.freeze([
  "working",
  "input_required",
  "completed",
  "failed",
  "cancelled",
]);

/** The protocol revision whose client created a task. */
export type TaskEra = "2025-11-25" | "2026-07-28";

/**
 * How a task is cancelled, by the era it was created in: a 2025-11-25 `tasks/cancel` ends
 * the task before it answers (`immediate`); a 2026-07-28 one records a request that the
 * handler acknowledges (`cooperative`). The facades are these rules for their own era; a
 * tool serving both eras' tasks (the console) asks {@link cancelModeOf}.
 */
export type CancelMode = "immediate" | "cooperative";

const CANCEL_MODES: Readonly<Record<TaskEra, CancelMode>> = Object.freeze({
  "2025-11-25": "immediate",
  "2026-07-28": "cooperative",
});

/** The {@link CancelMode} of a task created in `era`. */
export function cancelModeOf(era: TaskEra): CancelMode {
  return CANCEL_MODES[era];
}

/** The request a task runs: a tool and its arguments. */
export interface TaskRequest {
  readonly toolName: string;
  readonly arguments: Readonly<Record<string, unknown>>;
}

/**
 * JSON-RPC's "Internal error", the code of every failure the core itself decides (a lost
 * worker, an overstayed deadline, a thrown error without a code of its own).
 * @internal
 */
export const INTERNAL_ERROR_CODE = -32603;

/** A JSON-RPC error object, as carried by a failed task. */
export interface JsonRpcErrorObject {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/**
 * How a task ended. A tool result with `isError: true` is still a `result`: whether it
 * reads as completed or failed is the era facade's projection, not the store's concern.
 */
export type TaskOutcome =
  | { readonly kind: "result"; readonly result: Readonly<Record<string, unknown>> }
  | { readonly kind: "error"; readonly error: JsonRpcErrorObject };

/** A server-to-client request a task waits on, e.g. `elicitation/create`. */
export interface InputRequest {
  readonly method: string;
  readonly params?: Readonly<Record<string, unknown>>;
}

/** The client's answer to one {@link InputRequest}. */
export type InputResponse = Readonly<Record<string, unknown>>;

/**
 * When the retention clock starts. `creation` is the spec's reading (ttl counts from
 * creation); `terminal` keeps a finished task for ttl after it finished, so a long job's
 * result is not lost the moment it completes. Either way a running task never expires.
 */
export type TtlAnchor = "creation" | "terminal";

/**
 * The era-neutral task record. Timestamps are milliseconds since the epoch. Records are
 * immutable snapshots: every change produces a new record with a higher `version`.
 */
export interface TaskRecord {
  readonly taskId: string;
  readonly status: TaskStatus;
  readonly statusMessage: string | null;
  readonly createdAt: number;
  readonly lastUpdatedAt: number;
  /** Retention in ms; `null` keeps the task until it is deleted. */
  readonly ttlMs: number | null;
  readonly ttlAnchor: TtlAnchor;
  /** When a terminal task may be removed; `null` while running or with an unlimited ttl. */
  readonly expiresAt: number | null;
  /** Suggested polling interval in ms; `null` leaves it to the client. */
  readonly pollIntervalMs: number | null;
  readonly owner: Owner;
  readonly era: TaskEra;
  readonly request: TaskRequest;
  /** Set once the task is completed or failed; `null` otherwise (also when cancelled). */
  readonly outcome: TaskOutcome | null;
  /** Outstanding input requests by server-minted key. */
  readonly inputRequests: Readonly<Record<string, InputRequest>>;
  /** Responses received and not yet taken by the worker, by key. */
  readonly inputResponses: Readonly<Record<string, InputResponse>>;
  /** Keys already answered; a key is never reused during the task's lifetime. */
  readonly answeredInputKeys: readonly string[];
  /**
   * Every answer the task has received, by key, kept for its lifetime: a re-run of the
   * task (after its worker was lost) gets these at once when it asks the same questions.
   */
  readonly inputAnswers: Readonly<Record<string, InputResponse>>;
  /** When cancellation was first requested; the status is unchanged by the request. */
  readonly cancelRequestedAt: number | null;
  /** How the task is executed: its retry policy and the run that holds it. */
  readonly execution: TaskExecution;
  /**
   * The W3C trace context of the request that created the task (the creation span's, when
   * tracing is on): every run of the task, on any node, continues that trace, and polls
   * link to it. `null` when the creating request carried none.
   */
  readonly traceContext: TraceContext | null;
  /** Starts at 1 and grows by one with every change. */
  readonly version: number;
}

/**
 * How a task may be executed, fixed when it is created (from its tool's policy) so that
 * every node applies the same rules to it.
 */
export interface ExecutionPolicy {
  /** Most runs the task may get, the first included; 1 (the default) means no retry. */
  readonly maxAttempts: number;
  /** Wait before a retry, in ms; default 1000. */
  readonly backoffMs: number;
  /**
   * Also retry a run whose handler threw; by default only a lost worker or an overstayed
   * deadline is retried (a tool with side effects decides whether re-running is safe).
   */
  readonly retryOnError: boolean;
  /** How long one run may take, in ms; `null` (the default) for no limit. */
  readonly deadlineMs: number | null;
}

/** The default policy: one run, no deadline. */
export const DEFAULT_EXECUTION_POLICY: ExecutionPolicy = Object.freeze({
  maxAttempts: 1,
  backoffMs: 1000,
  retryOnError: false,
  deadlineMs: null,
});

/**
 * A task's place in the queue. A running task is either *queued* (`holder` null: any
 * worker may claim it from `availableAt` on) or *claimed* by one run, named by its
 * holder and fencing token: every write of that run carries both (a {@link Fence}), and
 * the store refuses the writes of a run that has been superseded.
 */
export interface TaskExecution extends ExecutionPolicy {
  /** Runs that counted so far (a run handed back on shutdown does not count). */
  readonly attempt: number;
  /** The worker running the task, while one is. */
  readonly holder: string | null;
  /** Grows by one with every claim; 0 before the first. */
  readonly fencingToken: number;
  /** When the holder's lease runs out (the holder renews it while it runs). */
  readonly leaseExpiresAt: number | null;
  /** Earliest time a queued task may be claimed (retry backoff); `null` for at once. */
  readonly availableAt: number | null;
}

/** Identifies one run of a task: the store refuses its writes once it is superseded. */
export interface Fence {
  readonly holder: string;
  readonly fencingToken: number;
}

/** What a store needs to create a task; the owner comes from the call's scope. */
export interface NewTask {
  readonly taskId: string;
  readonly era: TaskEra;
  readonly request: TaskRequest;
  readonly ttlMs: number | null;
  readonly ttlAnchor: TtlAnchor;
  readonly pollIntervalMs: number | null;
  readonly statusMessage?: string | null;
  /**
   * The worker that claims the task as it is created (its first run, fencing token 1) and
   * for how long its lease lasts. Without it the task is created queued, for any worker
   * to claim.
   */
  readonly lease?: TaskLease;
  /**
   * The queue's per-owner limits, when the creator applies them (the runner does). A task
   * with a `lease` is then claimed at creation only while its owner is under
   * `maxRunningPerOwner` (counted as a claim counts it), and created queued otherwise. A
   * task created queued with no `statusMessage` then says why it waits:
   * `QUEUED_OWNER_LIMIT_MESSAGE` when its owner is at the limit, else
   * `queuedAheadMessage` with the owner's queued tasks ahead of it.
   */
  readonly ownerLimits?: OwnerLimits;
  /** The task's execution policy; default {@link DEFAULT_EXECUTION_POLICY}. */
  readonly execution?: Partial<ExecutionPolicy>;
  /**
   * The trace context to store with the task (see {@link TaskRecord.traceContext}). Stores
   * keep it only when `traceparent` (and `tracestate`) are valid W3C values, and store
   * `null` otherwise: a client's bad value is dropped, never an error.
   */
  readonly traceContext?: TraceContext | null;
}

/** Who holds a running task's lease, and for how long from now. */
export interface TaskLease {
  readonly holder: string;
  readonly durationMs: number;
}
