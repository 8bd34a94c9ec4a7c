import { taskErrors } from "./errors.js";
import type { TakeInputResult } from "./lifecycle.js";
import type { OwnerScope } from "./owner.js";
import { supportsQueue } from "./queue-store.js";
import type { TaskStore } from "./store.js";
import type { InputRequest, JsonRpcErrorObject, TaskRecord } from "./task.js";

/**
 * The writes of one run of a task (see {@link TaskService.forRun}): each carries the run's
 * fence, so the store applies it only while this run still holds the task and refuses it
 * with `lease_lost` otherwise. Named by intent, like the service's own operations.
 */
export class RunWriter {
  readonly #store: TaskStore;
  readonly #taskId: string;
  readonly #scope: OwnerScope;
  readonly #verify: (record: TaskRecord) => TaskRecord;

  /** @internal Built by {@link TaskService.forRun}. */
  constructor(
    store: TaskStore,
    taskId: string,
    scope: OwnerScope,
    verify: (record: TaskRecord) => TaskRecord,
  ) {
    this.#store = store;
    this.#taskId = taskId;
    this.#scope = scope;
    this.#verify = verify;
  }

  async complete(result: Readonly<Record<string, unknown>>): Promise<TaskRecord> {
    return this.#verify(await this.#store.complete(this.#taskId, this.#scope, result));
  }

  async fail(error: JsonRpcErrorObject, statusMessage?: string | null): Promise<TaskRecord> {
    return this.#verify(await this.#store.fail(this.#taskId, this.#scope, error, statusMessage));
  }

  /** The run stopped on its cancel signal: acknowledge the cancellation. */
  async markCancelled(statusMessage?: string | null): Promise<TaskRecord> {
    return this.#verify(await this.#store.markCancelled(this.#taskId, this.#scope, statusMessage));
  }

  async requireInput(
    requests: Readonly<Record<string, InputRequest>>,
    statusMessage?: string | null,
  ): Promise<TaskRecord> {
    return this.#verify(
      await this.#store.requireInput(this.#taskId, this.#scope, requests, statusMessage),
    );
  }

  async setStatusMessage(statusMessage: string | null): Promise<TaskRecord> {
    return this.#verify(
      await this.#store.setStatusMessage(this.#taskId, this.#scope, statusMessage),
    );
  }

  async takeInputResponses(): Promise<TakeInputResult> {
    const taken = await this.#store.takeInputResponses(this.#taskId, this.#scope);
    this.#verify(taken.task);
    return taken;
  }

  /** Extends the run's lease; `false` when the run no longer holds the task. */
  renewLease(leaseMs: number): Promise<boolean> {
    return supportsQueue(this.#store)
      ? this.#store.renewLease(this.#taskId, this.#scope, leaseMs)
      : Promise.resolve(true);
  }

  /** Hands the task back to the queue, the attempt not counted (shutdown). */
  releaseLease(): Promise<boolean> {
    return supportsQueue(this.#store)
      ? this.#store.releaseLease(this.#taskId, this.#scope)
      : Promise.resolve(false);
  }

  /** Gives up this run for another attempt, after the task's backoff. */
  async requeue(statusMessage: string | null): Promise<TaskRecord> {
    if (!supportsQueue(this.#store)) throw taskErrors.invalidTask("the store has no queue");
    return this.#verify(await this.#store.requeue(this.#taskId, this.#scope, statusMessage));
  }
}
