import type { TaskChange, Unsubscribe } from "./store.js";

/**
 * In-process fan-out of per-task events (task changes by default), indexed by task id so
 * that delivering one event costs O(its listeners), not O(all listeners). Stores use it to
 * implement `watch`; the runner uses it for progress reports.
 */
export class ChangeFeed<E extends { readonly taskId: string } = TaskChange> {
  readonly #byTask = new Map<string, Set<(event: E) => void>>();
  readonly #all = new Set<(event: E) => void>();
  readonly #onListenerError: (error: unknown, event: E) => void;

  constructor(onListenerError: (error: unknown, event: E) => void = reportListenerError) {
    this.#onListenerError = onListenerError;
  }

  /** Subscribes to one task, or to all tasks when `taskId` is absent. */
  watch(listener: (event: E) => void, taskId?: string): Unsubscribe {
    if (taskId === undefined) {
      this.#all.add(listener);
      return () => {
        this.#all.delete(listener);
      };
    }
    let set = this.#byTask.get(taskId);
    if (!set) {
      set = new Set();
      this.#byTask.set(taskId, set);
    }
    set.add(listener);
    return () => {
      const current = this.#byTask.get(taskId);
      if (!current) return;
      current.delete(listener);
      if (current.size === 0) this.#byTask.delete(taskId);
    };
  }

  /** True when anyone listens to this task (or to all tasks). */
  hasListeners(taskId: string): boolean {
    return this.#all.size > 0 || this.#byTask.has(taskId);
  }

  /** The number of subscriptions, for leak checks. */
  get size(): number {
    let n = this.#all.size;
    for (const set of this.#byTask.values()) n += set.size;
    return n;
  }

  /** Delivers an event to its listeners, synchronously. */
  emit(change: E): void {
    const set = this.#byTask.get(change.taskId);
    if (set) for (const listener of [...set]) this.#deliver(listener, change);
    for (const listener of [...this.#all]) this.#deliver(listener, change);
  }

  /** Drops every subscription. */
  clear(): void {
    this.#byTask.clear();
    this.#all.clear();
  }

  #deliver(listener: (event: E) => void, change: E): void {
    try {
      listener(change);
    } catch (error) {
      this.#onListenerError(error, change);
    }
  }
}

function reportListenerError(error: unknown): void {
  // A broken listener must not stop the others or the write that triggered it.
  queueMicrotask(() => {
    console.error("task change listener failed:", error);
  });
}
