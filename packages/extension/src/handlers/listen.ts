import type { RpcOutcome } from "@mcp-tasks/core";
import { isTaskError } from "@mcp-tasks/core";
import { declaresTasksExtension } from "../capabilities.js";
import { SUBSCRIPTION_ID_META_KEY } from "../constants.js";
import { invalidParams, missingTasksExtension, taskFailureToRpc } from "../errors.js";
import { toDetailedTask } from "../projection.js";
import type { TasksRequestContext } from "../request.js";
import { TaskListenParamsSchema } from "../schemas.js";
import type { HandlerDeps } from "./deps.js";

/** True when `subscriptions/listen` params ask for task notifications. */
export function asksForTaskIds(params: unknown): boolean {
  if (typeof params !== "object" || params === null) return false;
  const notifications = (params as { notifications?: unknown }).notifications;
  return (
    typeof notifications === "object" &&
    notifications !== null &&
    (notifications as { taskIds?: unknown }).taskIds !== undefined
  );
}

/**
 * Checks a `subscriptions/listen` for `taskIds` before it is acknowledged: the extension is
 * declared on this request (`-32021`), and every id is the caller's task (`-32602` for the
 * first unknown or foreign id, like `tasks/get`). Returns the de-duplicated ids.
 */
export async function authorizeTaskSubscription(
  deps: HandlerDeps,
  ctx: TasksRequestContext,
  params: unknown,
): Promise<RpcOutcome<{ taskIds: string[] }>> {
  try {
    if (!declaresTasksExtension(ctx.clientCapabilities)) {
      throw missingTasksExtension("subscribing to taskIds requires the tasks extension");
    }
    const parsed = TaskListenParamsSchema.safeParse(params ?? {});
    if (!parsed.success) throw invalidParams("notifications.taskIds must be an array of task ids");
    const taskIds = [...new Set(parsed.data.notifications.taskIds ?? [])];
    for (const taskId of taskIds) await deps.service.get(ctx.owner, taskId);
    return { result: { taskIds } };
  } catch (error) {
    return { error: taskFailureToRpc(error, deps.onError) };
  }
}

/** A notification to write on the listen stream. */
export interface StreamNotification {
  readonly method: string;
  readonly params: Record<string, unknown>;
}

/**
 * Pushes `notifications/tasks` (a full DetailedTask, tagged with the subscription id) for
 * authorized task ids, driven by the store's change feed: a snapshot of each task right
 * after the acknowledgement, then one per change. Each task's notifications are sent in
 * order and never twice for the same version. `onAllTerminal` fires once every task has been
 * reported in a terminal state (or has vanished), so the stream can end.
 */
export interface TaskSubscription {
  /** The acknowledgement notification to write first. */
  acknowledgement(): StreamNotification;
  /** Starts following every task; each sends its current snapshot first. */
  start(): void;
  /** Stops following; idempotent. */
  close(): void;
}

/** What a {@link TaskSubscription} follows, and where its notifications go. */
export interface TaskSubscriptionOptions {
  readonly ctx: TasksRequestContext;
  readonly taskIds: readonly string[];
  readonly subscriptionId: string | number;
  readonly send: (notification: StreamNotification) => void;
  readonly onAllTerminal: () => void;
  /** Told about a failure that ended a task's notifications early; default `console.error`. */
  readonly onError?: (error: unknown) => void;
}

/** Creates the push side of an authorized subscription. */
export function subscribeToTasks(
  deps: HandlerDeps,
  options: TaskSubscriptionOptions,
): TaskSubscription {
  return new Subscription(deps, options);
}

class Subscription implements TaskSubscription {
  readonly #deps: HandlerDeps;
  readonly #ctx: TasksRequestContext;
  readonly #taskIds: readonly string[];
  readonly #subscriptionId: string | number;
  readonly #send: (notification: StreamNotification) => void;
  readonly #onAllTerminal: () => void;
  readonly #onError: (error: unknown) => void;
  readonly #stop = new AbortController();
  /** Tasks reported terminal or gone. */
  #finished = 0;

  constructor(deps: HandlerDeps, options: TaskSubscriptionOptions) {
    this.#deps = deps;
    this.#ctx = options.ctx;
    this.#taskIds = options.taskIds;
    this.#subscriptionId = options.subscriptionId;
    this.#send = options.send;
    this.#onAllTerminal = options.onAllTerminal;
    this.#onError = options.onError ?? ((error) => console.error("task subscription:", error));
  }

  /** The acknowledgement notification to write first. */
  acknowledgement(): StreamNotification {
    return {
      method: "notifications/subscriptions/acknowledged",
      params: {
        notifications: { taskIds: [...this.#taskIds] },
        _meta: { [SUBSCRIPTION_ID_META_KEY]: this.#subscriptionId },
      },
    };
  }

  /** Starts following every task; each sends its current snapshot first. */
  start(): void {
    if (this.#taskIds.length === 0) {
      this.#onAllTerminal();
      return;
    }
    for (const taskId of this.#taskIds) void this.#follow(taskId);
  }

  /** Stops following; idempotent. */
  close(): void {
    this.#stop.abort();
  }

  /**
   * One task's notifications, in version order and each version once. A store outage
   * delays them (`follow` retries); only the task's end or disappearance finishes it.
   */
  async #follow(taskId: string): Promise<void> {
    const signal = this.#stop.signal;
    try {
      for await (const record of this.#deps.service.follow(this.#ctx.owner, taskId, { signal })) {
        // A fresh object: its `_meta` set in place (see "Hot paths" in docs/architecture.md).
        const params: Record<string, unknown> = toDetailedTask(record);
        params._meta = { [SUBSCRIPTION_ID_META_KEY]: this.#subscriptionId };
        this.#send({ method: "notifications/tasks", params });
      }
    } catch (error) {
      if (signal.aborted) return;
      // Gone (expired or deleted): nothing more will ever be reported for it. Anything else
      // is not a client's business, but must not leave the stream open forever either.
      if (!isTaskError(error, "not_found_or_unauthorized")) this.#onError(error);
    }
    this.#finished += 1;
    if (!signal.aborted && this.#finished === this.#taskIds.length) this.#onAllTerminal();
  }
}
