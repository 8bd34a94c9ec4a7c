import type { Owner } from "./owner.js";

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

/** The request a task runs: a tool and its arguments. */
export interface TaskRequest {
  readonly toolName: string;
  readonly arguments: Readonly<Record<string, unknown>>;
}

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
  /** When cancellation was first requested; the status is unchanged by the request. */
  readonly cancelRequestedAt: number | null;
  /** Starts at 1 and grows by one with every change. */
  readonly version: number;
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
   * The worker that runs the task and for how long its first lease lasts. Stores that
   * implement {@link LeasingTaskStore} take the lease in the same write as the create, so
   * a node dying right after creating a task cannot leave it running forever; other
   * stores ignore it.
   */
  readonly lease?: TaskLease;
}

/** Who holds a running task's lease, and for how long from now. */
export interface TaskLease {
  readonly holder: string;
  readonly durationMs: number;
}
