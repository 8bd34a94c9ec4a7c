/**
 * What a run writes as its outcome: the handler's result, its error (or another attempt,
 * as the retry policy says), the acknowledgement of a cancellation, or what follows a run
 * past its deadline. Each is a write the runner may try again while the store is
 * unavailable, so each is returned as a function that makes the write.
 */

import { clientViewOf, isTaskError } from "./errors.js";
import { CANCELLED_WITHOUT_RUN_MESSAGE, nextAttempt } from "./retry-policy.js";
import type { RunWriter } from "./run-writer.js";
import {
  INTERNAL_ERROR_CODE,
  type JsonRpcErrorObject,
  type TaskExecution,
  type TaskRecord,
} from "./task.js";

/** One outcome write, made again on each try. */
export type OutcomeWrite = () => Promise<TaskRecord>;

/**
 * Turns anything a handler throws into the JSON-RPC error the task fails with: the error's
 * own integer `code` (and `data`) when it has one, else -32603 Internal error. A
 * `store_unavailable` task error names its cause (driver text, errno, the database's
 * address): the task gets the words clients get for such an outage instead
 * (`STORE_UNAVAILABLE_MESSAGE`, `data.reason` and `data.retryAfterMs`); whoever stores
 * the error reports the detail (the runner, to `onError`).
 */
export function toJsonRpcError(thrown: unknown): JsonRpcErrorObject {
  if (isTaskError(thrown, "store_unavailable")) {
    const { message, data } = clientViewOf(thrown);
    return { code: INTERNAL_ERROR_CODE, message, data };
  }
  if (typeof thrown === "object" && thrown !== null) {
    const { code, message, data } = thrown as { code?: unknown; message?: unknown; data?: unknown };
    const text = typeof message === "string" && message.length > 0 ? message : "Internal error";
    if (typeof code === "number" && Number.isInteger(code)) {
      return data === undefined ? { code, message: text } : { code, message: text, data };
    }
    return { code: INTERNAL_ERROR_CODE, message: text };
  }
  return {
    code: INTERNAL_ERROR_CODE,
    message: typeof thrown === "string" ? thrown : "Internal error",
  };
}

/** How a handler ended: it returned `result`, or it threw `thrown`. */
export type HandlerEnd =
  | { readonly threw: false; readonly result: unknown }
  | { readonly threw: true; readonly thrown: unknown };

/**
 * The outcome of a handler that ended as `end`: its result object; else, when its signal
 * had fired (`cancelled`), the acknowledgement of the cancellation; else its error (a
 * handler that returned no result object failed), or another attempt when the retry
 * policy allows one. The detail of a `store_unavailable` error goes to `report` (the task keeps only
 * the client's words).
 */
export function handlerOutcome(
  writer: RunWriter,
  execution: TaskExecution,
  end: HandlerEnd,
  cancelled: boolean,
  report: (error: unknown) => void,
): OutcomeWrite {
  const { result } = end as { result?: unknown };
  if (!end.threw && typeof result === "object" && result !== null && !Array.isArray(result)) {
    const value = result as Readonly<Record<string, unknown>>;
    return () => orRefused(writer, writer.complete(value), "result");
  }
  // The handler stopped on its signal (or gave up without a result): acknowledge it.
  if (cancelled) return () => writer.markCancelled();
  const thrown = end.threw ? end.thrown : new Error("The tool handler returned no result object");
  if (isTaskError(thrown, "store_unavailable")) report(thrown);
  const next = nextAttempt(execution, { kind: "failed", error: toJsonRpcError(thrown) });
  return next.retry
    ? () => writer.requeue(next.statusMessage)
    : () => orRefused(writer, writer.fail(next.error), "error");
}

/**
 * The outcome of a run past its deadline: another attempt while the retry policy allows
 * one; else, when the task's cancellation was requested (`cancelRequested`, asked only
 * then), the task ends cancelled; else it fails. A recorded cancel request wins over a
 * requeue too: the store ends such a task cancelled instead (atomically).
 */
export function deadlineOutcome(
  writer: RunWriter,
  execution: TaskExecution,
  cancelRequested: () => Promise<boolean>,
): OutcomeWrite {
  const next = nextAttempt(execution, { kind: "expired" });
  if (next.retry) return () => writer.requeue(next.statusMessage);
  return async () =>
    (await cancelRequested())
      ? writer.markCancelled(CANCELLED_WITHOUT_RUN_MESSAGE)
      : writer.fail(next.error);
}

/**
 * The store refusing the outcome itself (PostgreSQL's jsonb cannot hold U+0000, say) must
 * not leave the task unfinished until its lease runs out: it fails, saying why.
 */
async function orRefused(
  writer: RunWriter,
  write: Promise<TaskRecord>,
  what: string,
): Promise<TaskRecord> {
  try {
    return await write;
  } catch (refused) {
    if (!isTaskError(refused, "invalid_task")) throw refused;
    return writer.fail({
      code: INTERNAL_ERROR_CODE,
      message: `The tool's ${what} could not be stored: ${refused.message}`,
    });
  }
}
