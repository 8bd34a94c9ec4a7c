import type { QueuedMessage, TaskMessageQueue } from "@modelcontextprotocol/sdk/experimental/tasks";
import { sessionOf } from "./context.js";
import type { SdkTaskStore } from "./store.js";

/** Settings of {@link SdkTaskMessageQueue}. */
export interface SdkTaskMessageQueueOptions {
  /** Most messages queued per task; default 100 (the SDK's `maxTaskQueueSize` wins if lower). */
  readonly maxPerTask?: number;
  /** Most tasks with queued messages; default 10 000. */
  readonly maxTasks?: number;
}

/**
 * A bounded `TaskMessageQueue`. The SDK keeps the resolvers of queued side requests in the
 * memory of the process that queued them, so their queue is per process by nature: this
 * one is in-process, bounded, and partitioned by session so one session cannot drain
 * another's messages. A call without a session id uses the session of the request being
 * served on a bound transport (see {@link SdkTaskStore.bindTransport}), like the store.
 */
export class SdkTaskMessageQueue implements TaskMessageQueue {
  readonly #queues = new Map<string, QueuedMessage[]>();
  readonly #maxPerTask: number;
  readonly #maxTasks: number;

  constructor(options: SdkTaskMessageQueueOptions = {}) {
    this.#maxPerTask = options.maxPerTask ?? 100;
    this.#maxTasks = options.maxTasks ?? 10_000;
  }

  #key(taskId: string, sessionId: string | undefined): string {
    return `${sessionOf(sessionId) ?? ""}\u0000${taskId}`;
  }

  async enqueue(
    taskId: string,
    message: QueuedMessage,
    sessionId?: string,
    maxSize?: number,
  ): Promise<void> {
    const key = this.#key(taskId, sessionId);
    let queue = this.#queues.get(key);
    if (queue === undefined) {
      if (this.#queues.size >= this.#maxTasks) {
        throw new Error(`Task message queue is full (${this.#maxTasks} tasks)`);
      }
      queue = [];
      this.#queues.set(key, queue);
    }
    const limit = Math.min(maxSize ?? Number.POSITIVE_INFINITY, this.#maxPerTask);
    if (queue.length >= limit) {
      throw new Error(
        `Task message queue overflow: queue size (${queue.length}) exceeds maximum (${limit})`,
      );
    }
    queue.push(message);
  }

  async dequeue(taskId: string, sessionId?: string): Promise<QueuedMessage | undefined> {
    const key = this.#key(taskId, sessionId);
    const queue = this.#queues.get(key);
    const message = queue?.shift();
    if (queue?.length === 0) this.#queues.delete(key);
    return message;
  }

  async dequeueAll(taskId: string, sessionId?: string): Promise<QueuedMessage[]> {
    const key = this.#key(taskId, sessionId);
    const queue = this.#queues.get(key) ?? [];
    this.#queues.delete(key);
    return queue;
  }
}
