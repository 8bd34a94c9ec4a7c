/**
 * The closed vocabulary of task errors. Every store and the core throw only these; each era
 * facade maps them to JSON-RPC codes in exactly one place.
 */
export type TaskErrorCode =
  | "already_exists"
  | "invalid_task"
  | "invalid_transition"
  | "not_found_or_unauthorized"
  | "store_full"
  | "ttl_out_of_range"
  | "invalid_cursor"
  | "store_unavailable"
  | "lease_lost";

/** Every code, for exhaustive mapping tables and tests. */
export const TASK_ERROR_CODES: readonly TaskErrorCode[] = Object.freeze([
  "already_exists",
  "invalid_task",
  "invalid_transition",
  "not_found_or_unauthorized",
  "store_full",
  "ttl_out_of_range",
  "invalid_cursor",
  "store_unavailable",
  "lease_lost",
]);

/**
 * A store bound that refuses new work with `store_full`: tasks held in the store
 * (`maxTasks`), tasks held by one owner (`maxTasksPerOwner`), payload bytes held by one
 * owner (`maxBytesPerOwner`: arguments, results and input answers; see `taskPayloadBytes`).
 */
export type StoreQuota = "maxTasks" | "maxTasksPerOwner" | "maxBytesPerOwner";

/** Which quota a `store_full` error hit, and its configured value, for the wire's `data`. */
export interface StoreQuotaHit {
  readonly quota: StoreQuota;
  readonly limit: number;
}

/** An error from the task core or a task store. `code` is the part to branch on. */
export class TaskError extends Error {
  override readonly name = "TaskError";
  readonly code: TaskErrorCode;
  /** For `store_full`: the quota that was hit (facades put it in the error's `data`). */
  readonly quota: StoreQuotaHit | undefined;

  constructor(
    code: TaskErrorCode,
    message: string,
    options?: { cause?: unknown; quota?: StoreQuotaHit },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.quota = options?.quota;
  }
}

/** True when `error` is a {@link TaskError}, optionally with the given code. */
export function isTaskError(error: unknown, code?: TaskErrorCode): error is TaskError {
  return error instanceof TaskError && (code === undefined || error.code === code);
}

/** The wording of `store_full`, one per quota, naming the quota that was hit. */
const STORE_FULL_MESSAGES: Readonly<Record<StoreQuota, (limit: number) => string>> = {
  maxTasks: (limit) => `The task store is full (maxTasks: ${limit} tasks held); try again later`,
  maxTasksPerOwner: (limit) =>
    `Too many tasks for this owner (maxTasksPerOwner: ${limit}); wait for some to finish or expire`,
  maxBytesPerOwner: (limit) =>
    `Too much task data for this owner (maxBytesPerOwner: ${limit} bytes of arguments, results and input answers); wait for some tasks to expire or delete them`,
};

/** Constructors with one wording per situation, so messages stay consistent across stores. */
export const taskErrors = {
  alreadyExists: (taskId: string) =>
    new TaskError("already_exists", `A task with id ${taskId} already exists`),
  invalidTask: (reason: string) => new TaskError("invalid_task", `Invalid task: ${reason}`),
  /** A value holding U+0000, which no store keeps (see `assertStorable`); `at` a JSON pointer. */
  unstorableText: (what: string, at: string) =>
    new TaskError(
      "invalid_task",
      `Invalid task: ${what} hold${what.endsWith("s") ? "" : "s"} the character U+0000${at === "" ? "" : ` at ${at}`}, which task stores cannot keep; remove it or encode it (e.g. base64)`,
    ),
  invalidTransition: (taskId: string, from: string, operation: string) =>
    new TaskError(
      "invalid_transition",
      `Cannot ${operation} task ${taskId}: it is already in status '${from}'`,
    ),
  notFound: (taskId: string) =>
    // The same words for a missing task and for a task owned by someone else.
    new TaskError("not_found_or_unauthorized", `Task ${taskId} not found`),
  ownerRequired: () =>
    new TaskError("not_found_or_unauthorized", "An authenticated owner is required for tasks"),
  storeFull: (quota: StoreQuota, limit: number) =>
    new TaskError("store_full", STORE_FULL_MESSAGES[quota](limit), { quota: { quota, limit } }),
  ttlOutOfRange: (ttlMs: number, maxTtlMs: number) =>
    new TaskError(
      "ttl_out_of_range",
      `Requested ttl ${ttlMs} ms is above the maximum of ${maxTtlMs} ms`,
    ),
  invalidCursor: () => new TaskError("invalid_cursor", "Invalid or expired cursor"),
  leaseLost: (taskId: string) =>
    new TaskError(
      "lease_lost",
      `Task ${taskId} is no longer held by this run: another run superseded it, or it was requeued`,
    ),
  storeUnavailable: (detail: string, cause?: unknown) =>
    new TaskError("store_unavailable", `The task store is unavailable: ${detail}`, { cause }),
} as const;

/** Suggested wait before a client retries a request refused with `store_unavailable`. */
export const STORE_RETRY_AFTER_MS = 1000;

/** What a client is told instead of a `store_unavailable` error's detail. */
export const STORE_UNAVAILABLE_MESSAGE =
  "The task service is temporarily unavailable; retry shortly";

/** The `data` of a task error on the wire, the same in both eras. */
export interface TaskErrorData {
  /** The {@link TaskErrorCode}. */
  readonly reason: TaskErrorCode;
  /** `store_full`: the quota that was hit. */
  readonly quota?: StoreQuota;
  /** `store_full`: that quota's configured value (tasks or bytes). */
  readonly limit?: number;
  /** `store_unavailable`: how long to wait before retrying, in ms. */
  readonly retryAfterMs?: number;
}

/**
 * What a client may learn of a task error: its message and wire `data`; each facade adds
 * its era's JSON-RPC code. A `store_unavailable` error's message names the cause (driver
 * text, the database's address): clients get a plain "retry" message and a retry hint
 * instead, and the facade reports the error itself to its `onError` hook.
 */
export function clientViewOf(error: TaskError): { message: string; data: TaskErrorData } {
  switch (error.code) {
    case "store_unavailable":
      return {
        message: STORE_UNAVAILABLE_MESSAGE,
        data: { reason: error.code, retryAfterMs: STORE_RETRY_AFTER_MS },
      };
    case "store_full":
      return {
        message: error.message,
        data:
          error.quota === undefined
            ? { reason: error.code }
            : { reason: error.code, quota: error.quota.quota, limit: error.quota.limit },
      };
    default:
      return { message: error.message, data: { reason: error.code } };
  }
}
