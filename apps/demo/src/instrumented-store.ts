import type { TaskStore } from "@mcp-tasks/core";
import { supportsQueue, type TaskQueueStore } from "@mcp-tasks/core/store";

/** The timed operations of every store (all but `watch` and `close`). */
export const STORE_OPERATIONS = [
  "create",
  "get",
  "list",
  "listNewest",
  "listNewestAcrossOwners",
  "getAcrossOwners",
  "complete",
  "fail",
  "requireInput",
  "setStatusMessage",
  "requestCancel",
  "markCancelled",
  "submitInput",
  "takeInputResponses",
  "delete",
  "cleanupExpired",
] as const satisfies readonly (keyof TaskStore)[];

/** The timed operations a queue store adds. */
export const QUEUE_OPERATIONS = [
  "claim",
  "renewLease",
  "releaseLease",
  "requeue",
  "recoverOrphans",
] as const satisfies readonly Exclude<keyof TaskQueueStore, keyof TaskStore>[];

/** A store operation name, the `op` label of the store metrics. */
export type StoreOperation = (typeof STORE_OPERATIONS)[number] | (typeof QUEUE_OPERATIONS)[number];

// Compile-time guard: a method added to the contract must be added above, or the wrapper
// would silently drop it (and `supportsQueue`-style detection would see a different store).
type Unlisted = Exclude<keyof TaskQueueStore, StoreOperation | "watch" | "close">;
const _everyOperationListed: [Unlisted] extends [never] ? true : { unlisted: Unlisted } = true;

type Method<K extends StoreOperation> = TaskQueueStore[K] extends (...args: infer A) => infer R
  ? { readonly op: K; readonly args: A; readonly result: Awaited<R> }
  : never;

/** One successful store call: the operation, its arguments and what it resolved with. */
export type StoreCall = { [K in StoreOperation]: Method<K> }[StoreOperation];

/** Told about every call of an {@link instrumentStore} wrapper. Must not throw. */
export interface StoreCallObserver {
  /** Every settled call: its duration in seconds, and what it threw (`null` on success). */
  settled(op: StoreOperation, seconds: number, failure: { readonly error: unknown } | null): void;
  /** Every successful call, after {@link settled}. */
  succeeded?(call: StoreCall): void;
}

/**
 * Wraps a task store so that every contract call is timed and observed, and otherwise
 * passed through unchanged (same arguments, same result, same error). The wrapper has the
 * queue methods exactly when the store has them, so `supportsQueue(wrapper)` answers as
 * `supportsQueue(store)` does; methods outside the contract are not carried over.
 */
export function instrumentStore(
  store: TaskQueueStore,
  observer: StoreCallObserver,
  clock?: () => number,
): TaskQueueStore;
export function instrumentStore(
  store: TaskStore,
  observer: StoreCallObserver,
  clock?: () => number,
): TaskStore;
export function instrumentStore(
  store: TaskStore,
  observer: StoreCallObserver,
  clock: () => number = () => performance.now(),
): TaskStore {
  const operations: readonly StoreOperation[] = supportsQueue(store)
    ? [...STORE_OPERATIONS, ...QUEUE_OPERATIONS]
    : STORE_OPERATIONS;
  const wrapper: Record<string, unknown> = {
    watch: store.watch.bind(store),
    close: store.close.bind(store),
  };
  for (const op of operations) {
    const method = (store as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[
      op
    ];
    if (typeof method !== "function") continue;
    // One `then` on the store's promise rather than an async function awaiting it: every
    // poll passes through here, and the async wrapper cost a promise and a microtask more.
    wrapper[op] = (...args: unknown[]): Promise<unknown> => {
      const started = clock();
      let pending: unknown;
      try {
        pending = method.apply(store, args);
      } catch (error) {
        // As an async method would: a synchronous throw becomes a rejection.
        tell(observer, op, (clock() - started) / 1000, { error }, undefined);
        return Promise.reject(error);
      }
      return Promise.resolve(pending).then(
        (result) => {
          tell(observer, op, (clock() - started) / 1000, null, { op, args, result } as StoreCall);
          return result;
        },
        (error: unknown) => {
          tell(observer, op, (clock() - started) / 1000, { error }, undefined);
          throw error;
        },
      );
    };
  }
  return wrapper as unknown as TaskStore;
}

/** Tells the observer; metrics must never fail a task write, so its errors are only logged. */
function tell(
  observer: StoreCallObserver,
  op: StoreOperation,
  seconds: number,
  failure: { readonly error: unknown } | null,
  call: StoreCall | undefined,
): void {
  try {
    observer.settled(op, seconds, failure);
    if (call !== undefined) observer.succeeded?.(call);
  } catch (error) {
    queueMicrotask(() => console.error("store metrics observer failed:", error));
  }
}
