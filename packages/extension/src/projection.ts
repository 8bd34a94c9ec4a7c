import { isoTime, type JsonRpcErrorObject, type TaskRecord } from "@mcp-tasks/core";
import { RELATED_TASK_META_KEY } from "./constants.js";
import type { CreateTaskResult, DetailedTask, GetTaskResult, WireTask } from "./schemas.js";

/** The era-2 `Task` fields of a record (`ttlMs`/`pollIntervalMs`, ISO timestamps). */
export function toWireTask(record: TaskRecord): WireTask {
  const task: WireTask = {
    taskId: record.taskId,
    status: record.status,
    createdAt: isoTime(record.createdAt),
    lastUpdatedAt: isoTime(record.lastUpdatedAt),
    ttlMs: record.ttlMs,
  };
  if (record.statusMessage !== null) task.statusMessage = record.statusMessage;
  if (record.pollIntervalMs !== null && record.pollIntervalMs > 0) {
    task.pollIntervalMs = Math.ceil(record.pollIntervalMs);
  }
  return task;
}

/** The flat `CreateTaskResult` returned from `tools/call`. */
export function toCreateTaskResult(record: TaskRecord): CreateTaskResult {
  return { resultType: "task", ...toWireTask(record) };
}

/**
 * A stored tool result as the 2026 `CallToolResult` a completed task inlines: with
 * `resultType: "complete"`, a `content` array, and no 2025 related-task `_meta`.
 */
export function toInlinedResult(result: Readonly<Record<string, unknown>>): {
  content: Array<{ type: string; [key: string]: unknown }>;
  resultType: "complete";
  [key: string]: unknown;
} {
  const { _meta, resultType: _ignored, ...out } = result as Record<string, unknown>;
  // `out` is a fresh copy: filled in place, in the key order of `{ ...rest, content,
  // resultType }` (see "Hot paths" in docs/architecture.md).
  out.content = Array.isArray(out.content) ? out.content : [];
  out.resultType = "complete";
  if (typeof _meta === "object" && _meta !== null && !Array.isArray(_meta)) {
    const { [RELATED_TASK_META_KEY]: _related, ...meta } = _meta as Record<string, unknown>;
    if (Object.keys(meta).length > 0) out._meta = meta;
  }
  return out as ReturnType<typeof toInlinedResult>;
}

function failure(record: TaskRecord): JsonRpcErrorObject {
  if (record.outcome?.kind === "error") return record.outcome.error;
  return { code: -32603, message: record.statusMessage ?? "The task failed" };
}

/**
 * The `DetailedTask` for a record, identical for `tasks/get` and `notifications/tasks`:
 * `inputRequests` while input is required, `result` when completed (tool errors included),
 * `error` when failed.
 */
export function toDetailedTask(record: TaskRecord): DetailedTask {
  // A fresh object: completed in place, in the key order of `{ ...task, status, … }` (see
  // "Hot paths" in docs/architecture.md). `status` is already the record's.
  const task = toWireTask(record) as WireTask & Record<string, unknown>;
  switch (record.status) {
    case "input_required":
      task.inputRequests = Object.fromEntries(
        Object.entries(record.inputRequests).map(([key, request]) => [
          key,
          request.params === undefined
            ? { method: request.method as "elicitation/create" }
            : {
                method: request.method as "elicitation/create",
                params: { ...request.params },
              },
        ]),
      );
      return task as DetailedTask;
    case "completed":
      task.result = toInlinedResult(record.outcome?.kind === "result" ? record.outcome.result : {});
      return task as DetailedTask;
    case "failed": {
      const error = failure(record);
      task.statusMessage = task.statusMessage ?? error.message;
      task.error =
        error.data === undefined ? { code: error.code, message: error.message } : { ...error };
      return task as DetailedTask;
    }
    case "working":
      return task as DetailedTask;
    case "cancelled":
      return task as DetailedTask;
  }
}

/** The `tasks/get` result. */
export function toGetTaskResult(record: TaskRecord): GetTaskResult {
  // `toDetailedTask` answers a fresh object: add the key in place (same order as a spread).
  const result = toDetailedTask(record) as GetTaskResult;
  result.resultType = "complete";
  return result;
}
