import { expect } from "vitest";
import { isTaskError, type TaskErrorCode } from "../errors.js";
import type { TaskChange, TaskStore } from "../store.js";
import type { TaskStatus } from "../task.js";
import { TRANSITIONS } from "../transitions.js";

/** Every task status, from core's transition table: the rows of the intent × status matrix. */
export const TASK_STATUSES = Object.keys(TRANSITIONS) as readonly TaskStatus[];

/** Expects `promise` to reject with a task error of `code`; resolves with the error. */
export async function expectTaskError(
  promise: Promise<unknown>,
  code: TaskErrorCode,
): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    expect(isTaskError(error), `expected a TaskError, got ${String(error)}`).toBe(true);
    expect((error as { code: string }).code).toBe(code);
    return error as Error;
  }
  throw new Error(`expected ${code}, but the call succeeded`);
}

/**
 * Records the change events of one task (or of all tasks) of `store`: `atLeast(n)` waits
 * until `n` have arrived, failing after `timeoutMs`; `stop` ends the subscription.
 */
export function collectChanges(store: TaskStore, timeoutMs: number, taskId?: string) {
  const events: TaskChange[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const stop = store.watch((change) => {
    events.push(change);
    for (const w of waiters.splice(0)) {
      if (events.length >= w.n) w.resolve();
      else waiters.push(w);
    }
  }, taskId);
  const atLeast = (n: number) =>
    new Promise<void>((resolve, reject) => {
      if (events.length >= n) return resolve();
      const timer = setTimeout(
        () => reject(new Error(`only ${events.length} of ${n} change events arrived`)),
        timeoutMs,
      );
      waiters.push({
        n,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  const seen = () => events.map((e) => [e.taskId, e.kind, e.status, e.version]);
  return { events, atLeast, stop, seen };
}
