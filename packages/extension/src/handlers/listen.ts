import { isTerminal, type TaskRecord } from "@mcp-tasks/core";
import { declaresTasksExtension } from "../capabilities.js";
import { SUBSCRIPTION_ID_META_KEY } from "../constants.js";
import { invalidParams, missingTasksExtension, taskFailureToRpc } from "../errors.js";
import { toDetailedTask } from "../projection.js";
import type { RpcOutcome, TasksRequestContext } from "../request.js";
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
    return { error: taskFailureToRpc(error) };
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
export class TaskSubscription {
  readonly #deps: HandlerDeps;
  readonly #ctx: TasksRequestContext;
  readonly #taskIds: readonly string[];
  readonly #subscriptionId: string | number;
  readonly #send: (notification: StreamNotification) => void;
  readonly #onAllTerminal: () => void;
  readonly #sentVersion = new Map<string, number>();
  readonly #finished = new Set<string>();
  readonly #chains = new Map<string, Promise<void>>();
  readonly #unsubscribes: Array<() => void> = [];
  #closed = false;

  constructor(options: {
    deps: HandlerDeps;
    ctx: TasksRequestContext;
    taskIds: readonly string[];
    subscriptionId: string | number;
    send: (notification: StreamNotification) => void;
    onAllTerminal: () => void;
  }) {
    this.#deps = options.deps;
    this.#ctx = options.ctx;
    this.#taskIds = options.taskIds;
    this.#subscriptionId = options.subscriptionId;
    this.#send = options.send;
    this.#onAllTerminal = options.onAllTerminal;
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

  /** Starts watching and sends the first snapshots. */
  start(): void {
    if (this.#taskIds.length === 0) {
      this.#onAllTerminal();
      return;
    }
    for (const taskId of this.#taskIds) {
      this.#unsubscribes.push(this.#deps.service.watch(() => this.#refresh(taskId), taskId));
      this.#refresh(taskId);
    }
  }

  /** Stops watching; idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const unsubscribe of this.#unsubscribes.splice(0)) unsubscribe();
  }

  #refresh(taskId: string): void {
    const previous = this.#chains.get(taskId) ?? Promise.resolve();
    const next = previous.then(() => this.#push(taskId));
    this.#chains.set(taskId, next);
  }

  async #push(taskId: string): Promise<void> {
    if (this.#closed || this.#finished.has(taskId)) return;
    let record: TaskRecord;
    try {
      record = await this.#deps.service.get(this.#ctx.owner, taskId);
    } catch {
      // Gone (expired or deleted): nothing more will ever be reported for it.
      this.#finish(taskId);
      return;
    }
    if (this.#closed || (this.#sentVersion.get(taskId) ?? 0) >= record.version) return;
    this.#sentVersion.set(taskId, record.version);
    this.#send({
      method: "notifications/tasks",
      params: {
        ...toDetailedTask(record),
        _meta: { [SUBSCRIPTION_ID_META_KEY]: this.#subscriptionId },
      },
    });
    if (isTerminal(record.status)) this.#finish(taskId);
  }

  #finish(taskId: string): void {
    this.#finished.add(taskId);
    if (!this.#closed && this.#finished.size === this.#taskIds.length) this.#onAllTerminal();
  }
}
