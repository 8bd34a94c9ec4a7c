// The errors SdkTaskStore throws, shaped (a `code`, maybe `data`) so the SDK answers them
// as the JSON-RPC errors its own handlers give for the same conditions.

import type { FailureReporter } from "@mcp-tasks/core";
import { isTaskError, type TaskRecord } from "@mcp-tasks/core";
import type { Task } from "@modelcontextprotocol/sdk/types.js";
import { legacyTaskError } from "../errors.js";
import { legacyStatusOf } from "../projection.js";

/** JSON-RPC codes the SDK's own handlers answer with for the same conditions. */
const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

/** An error the SDK turns into a JSON-RPC error with this code (and `data`, if any). */
export function sdkError(code: number, message: string, data?: unknown): Error {
  return Object.assign(new Error(message), data === undefined ? { code } : { code, data });
}

// The texts below are the SDK's `InMemoryTaskStore`'s, word for word, so code and tests
// written against it keep matching; statuses are the ones an SDK client sees.
export function notFound(taskId: string): Error {
  return sdkError(INVALID_PARAMS, `Task with ID ${taskId} not found`);
}

export function resultAlreadyStored(taskId: string, record: TaskRecord): Error {
  return sdkError(
    INVALID_PARAMS,
    `Cannot store result for task ${taskId} in terminal status '${legacyStatusOf(record)}'. Task results can only be stored once.`,
  );
}

export function terminalUpdate(taskId: string, record: TaskRecord, status: Task["status"]): Error {
  return sdkError(
    INVALID_PARAMS,
    `Cannot update task ${taskId} from terminal status '${legacyStatusOf(record)}' to '${status}'. Terminal states (completed, failed, cancelled) cannot transition to other states.`,
  );
}

export function noResultStored(taskId: string): Error {
  return sdkError(INTERNAL_ERROR, `Task ${taskId} has no result stored`);
}

export function invalidCursor(cursor: string | undefined): Error {
  return sdkError(INVALID_PARAMS, `Invalid cursor: ${cursor}`);
}

/**
 * A core error as the SDK would word it: a task the caller cannot see is not found (in the
 * SDK store's words when the task is known); the rest get this era's code, message and
 * `data` (an unreachable store's detail goes to `report`, not to the client).
 */
export function mapped(error: unknown, taskId?: string, report?: FailureReporter): unknown {
  if (!isTaskError(error)) return error;
  if (taskId !== undefined && error.code === "not_found_or_unauthorized") return notFound(taskId);
  const wire = legacyTaskError(error, report);
  return sdkError(wire.code, wire.message, wire.data);
}
