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

/** An error from the task core or a task store. `code` is the part to branch on. */
export class TaskError extends Error {
  override readonly name = "TaskError";
  readonly code: TaskErrorCode;

  constructor(code: TaskErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** True when `error` is a {@link TaskError}, optionally with the given code. */
export function isTaskError(error: unknown, code?: TaskErrorCode): error is TaskError {
  return error instanceof TaskError && (code === undefined || error.code === code);
}

/** Constructors with one wording per situation, so messages stay consistent across stores. */
export const taskErrors = {
  alreadyExists: (taskId: string) =>
    new TaskError("already_exists", `A task with id ${taskId} already exists`),
  invalidTask: (reason: string) => new TaskError("invalid_task", `Invalid task: ${reason}`),
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
  storeFull: (limit: "maxTasks" | "maxTasksPerOwner", max: number) =>
    new TaskError(
      "store_full",
      limit === "maxTasks"
        ? `The task store is full (${max} tasks); try again later`
        : `Too many tasks for this owner (${max}); wait for some to finish or expire`,
    ),
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
