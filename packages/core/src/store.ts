import type { SubmitInputResult, TakeInputResult } from "./lifecycle.js";
import type { OwnerScope } from "./owner.js";
import type {
  InputRequest,
  InputResponse,
  JsonRpcErrorObject,
  NewTask,
  TaskRecord,
  TaskStatus,
} from "./task.js";

/** What to list. */
export interface ListQuery {
  /** Only tasks in one of these statuses; all statuses when absent or empty. */
  readonly statuses?: readonly TaskStatus[];
  /** A cursor from a previous page; the first page when absent. */
  readonly cursor?: string;
  /** The page size wanted; stores clamp it to their own maximum. */
  readonly limit: number;
}

/**
 * What to list newest first ({@link TaskStore.listNewest}): the page-by-page view of a
 * console, filtered by status and tool.
 */
export interface NewestQuery {
  /** Only tasks in one of these statuses; all statuses when absent or empty. */
  readonly statuses?: readonly TaskStatus[];
  /** Only tasks of one of these tools; all tools when absent or empty. */
  readonly toolNames?: readonly string[];
  /** A cursor from a previous page of the same listing; the newest tasks when absent. */
  readonly cursor?: string;
  /** The page size wanted; stores clamp it to their own maximum. */
  readonly limit: number;
}

/** One page of tasks, in the order of the listing that made it. */
export interface TaskPage {
  readonly tasks: readonly TaskRecord[];
  /** Present when more tasks may follow. */
  readonly nextCursor?: string;
}

/**
 * What happened to a task; watchers re-read the task for the details. `queued`: it became
 * claimable (created without a worker, requeued, handed back); `claimed`: a run took it.
 */
export type TaskChangeKind =
  | "created"
  | "status_changed"
  | "status_message"
  | "input_requested"
  | "input_submitted"
  | "input_taken"
  | "cancel_requested"
  | "queued"
  | "claimed"
  | "deleted";

/**
 * A change-feed event. It carries no payload and no owner, so delivering it anywhere leaks
 * nothing: a watcher that wants the task reads it again through its own owner scope.
 */
export interface TaskChange {
  readonly taskId: string;
  readonly kind: TaskChangeKind;
  readonly status: TaskStatus;
  readonly version: number;
  /**
   * On `queued` changes, the task's tool (`request.toolName`) where the store knows it, so
   * that a worker that does not run that tool need not look for it (see `changeOf`). Absent
   * otherwise, and from stores or notifications that do not carry it: then a worker looks.
   */
  readonly toolName?: string;
}

/** A change-feed listener. It must not throw; errors are reported and otherwise ignored. */
export type TaskChangeListener = (change: TaskChange) => void;

/** Stops a subscription. Calling it twice is harmless. */
export type Unsubscribe = () => void;

/**
 * The storage contract every task store implements and `describeTaskStoreContract` checks.
 *
 * - Every call carries the caller's {@link OwnerScope}. A task outside the scope behaves
 *   exactly like a missing one: `not_found_or_unauthorized`.
 * - Each intent operation is atomic, a conditional write and never a read-modify-write
 *   that another writer could interleave with. Of concurrent terminal writes to one task,
 *   exactly one wins; the others get `invalid_transition`.
 * - `create` resolves only once `get` (on any node sharing the store) finds the task.
 * - Terminal tasks whose `expiresAt` has passed are gone for every call, swept or not.
 *   Running tasks never expire.
 * - Errors are {@link TaskError}s from the closed vocabulary; a store that cannot reach its
 *   backend throws `store_unavailable` rather than hanging.
 */
export interface TaskStore {
  /**
   * Stores a new `working` task owned by `scope.owner`: claimed by `task.lease.holder`
   * when a lease is given, else queued (stores that are no {@link TaskQueueStore} ignore
   * the lease).
   */
  create(task: NewTask, scope: OwnerScope): Promise<TaskRecord>;

  /** Reads one task. */
  get(taskId: string, scope: OwnerScope): Promise<TaskRecord>;

  /** Lists the scope's tasks in creation order, by keyset cursor. */
  list(scope: OwnerScope, query: ListQuery): Promise<TaskPage>;

  /**
   * Lists the scope's tasks newest first (reverse creation order), by keyset cursor,
   * filtered by status and tool. A cursor stays valid when tasks are created or deleted.
   */
  listNewest(scope: OwnerScope, query: NewestQuery): Promise<TaskPage>;

  /**
   * The operator's listing: every owner's tasks newest first, like {@link listNewest}.
   * It bypasses owner scoping on purpose; only operator tooling that authenticated an
   * operator calls it (through `TaskService.listNewestAcrossOwners`), never a request path
   * acting for an owner.
   */
  listNewestAcrossOwners(query: NewestQuery): Promise<TaskPage>;

  /**
   * The operator's read: one task whoever owns it (`not_found_or_unauthorized` only when
   * it is missing or expired). Bypasses owner scoping on purpose, like
   * {@link listNewestAcrossOwners}; act on the task afterwards as its owner.
   */
  getAcrossOwners(taskId: string): Promise<TaskRecord>;

  /** `working | input_required → completed`. */
  complete(
    taskId: string,
    scope: OwnerScope,
    result: Readonly<Record<string, unknown>>,
    statusMessage?: string | null,
  ): Promise<TaskRecord>;

  /** `working | input_required → failed`. */
  fail(
    taskId: string,
    scope: OwnerScope,
    error: JsonRpcErrorObject,
    statusMessage?: string | null,
  ): Promise<TaskRecord>;

  /** `working | input_required → input_required`, adding requests under fresh keys. */
  requireInput(
    taskId: string,
    scope: OwnerScope,
    requests: Readonly<Record<string, InputRequest>>,
    statusMessage?: string | null,
  ): Promise<TaskRecord>;

  /** Changes a running task's status message. */
  setStatusMessage(
    taskId: string,
    scope: OwnerScope,
    statusMessage: string | null,
  ): Promise<TaskRecord>;

  /** Records a cancellation request; idempotent, status unchanged, no-op when terminal. */
  requestCancel(taskId: string, scope: OwnerScope): Promise<TaskRecord>;

  /** `working | input_required → cancelled`: the acknowledgement of a cancellation. */
  markCancelled(
    taskId: string,
    scope: OwnerScope,
    statusMessage?: string | null,
  ): Promise<TaskRecord>;

  /** Applies input responses by key (see `submitTaskInput` for the rules). */
  submitInput(
    taskId: string,
    scope: OwnerScope,
    responses: Readonly<Record<string, InputResponse>>,
  ): Promise<SubmitInputResult>;

  /** Atomically hands over and clears the received input responses. */
  takeInputResponses(taskId: string, scope: OwnerScope): Promise<TakeInputResult>;

  /** Removes a task now, whatever its status. */
  delete(taskId: string, scope: OwnerScope): Promise<void>;

  /**
   * Removes terminal tasks whose retention ran out, at most `limit` of them (all when
   * absent), and returns how many it removed. Safe to run from several places at once.
   */
  cleanupExpired(options?: { limit?: number }): Promise<number>;

  /**
   * Subscribes to changes of one task, or of every task when `taskId` is absent. Events
   * for changes committed after the subscription started are delivered, including changes
   * made elsewhere (another node) when the store is shared.
   */
  watch(listener: TaskChangeListener, taskId?: string): Unsubscribe;

  /** Releases timers, connections and listeners. */
  close(): Promise<void>;
}
