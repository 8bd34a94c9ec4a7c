import {
  isoTime,
  listedToolFields,
  RpcError,
  type TaskMode,
  type TaskRecord,
  type TaskStatus,
  type ToolDefinition,
} from "@mcp-tasks/core";
import { internalError } from "./errors.js";
import {
  type LegacyTask,
  LegacyTaskSchema,
  type LegacyTool,
  RELATED_TASK_META_KEY,
  type TaskSupport,
} from "./wire.js";

/**
 * The only file that turns era-neutral records into 2025-11-25 wire shapes. Every shape is
 * checked against its zod schema on the way out.
 */

const TASK_SUPPORT: Readonly<Record<TaskMode, TaskSupport>> = Object.freeze({
  never: "forbidden",
  optional: "optional",
  always: "required",
});

/** `never | optional | always` → `forbidden | optional | required`. */
export function taskSupportOf(mode: TaskMode): TaskSupport {
  return TASK_SUPPORT[mode];
}

/** A tool as this era lists it, with `execution.taskSupport`. */
export function toLegacyTool(tool: ToolDefinition): LegacyTool {
  const { title, description, ...rest } = listedToolFields(tool);
  return {
    name: tool.name,
    ...(title !== undefined && { title: title as string }),
    ...(description !== undefined && { description: description as string }),
    inputSchema: { type: "object", ...tool.inputSchema } as LegacyTool["inputSchema"],
    ...rest,
    execution: { taskSupport: taskSupportOf(tool.taskMode) },
  };
}

/** True when the stored outcome is a tool result flagged `isError: true`. */
function isToolErrorResult(record: TaskRecord): boolean {
  return record.outcome?.kind === "result" && record.outcome.result.isError === true;
}

/**
 * The status a 2025-11-25 client sees: a tool result with `isError: true` is `failed` in
 * this era (it stays `completed` in the store and in the 2026 era).
 */
export function legacyStatusOf(record: TaskRecord): TaskStatus {
  return record.status === "completed" && isToolErrorResult(record) ? "failed" : record.status;
}

function firstText(result: Readonly<Record<string, unknown>>): string | undefined {
  const content = result.content;
  if (!Array.isArray(content)) return undefined;
  for (const block of content) {
    if (typeof block === "object" && block !== null && block.type === "text") {
      const text = (block as { text?: unknown }).text;
      if (typeof text === "string" && text.length > 0) return text;
    }
  }
  return undefined;
}

function statusMessageOf(record: TaskRecord): string | undefined {
  if (record.statusMessage !== null) return record.statusMessage;
  const outcome = record.outcome;
  // A failed task SHOULD carry a diagnostic statusMessage (2025-11-25 §Status lifecycle).
  if (outcome?.kind === "error") return outcome.error.message;
  if (outcome?.kind === "result" && isToolErrorResult(record)) {
    return firstText(outcome.result) ?? "The tool reported an error";
  }
  return undefined;
}

/** The 2025-11-25 `Task`: ISO timestamps, `ttl` always present (`null` = unlimited). */
export function toLegacyTask(record: TaskRecord): LegacyTask {
  const statusMessage = statusMessageOf(record);
  return LegacyTaskSchema.parse({
    taskId: record.taskId,
    status: legacyStatusOf(record),
    ...(statusMessage !== undefined && { statusMessage }),
    createdAt: isoTime(record.createdAt),
    lastUpdatedAt: isoTime(record.lastUpdatedAt),
    ttl: record.ttlMs,
    ...(record.pollIntervalMs !== null && { pollInterval: record.pollIntervalMs }),
  });
}

/** `_meta` carrying the related-task key, merged into existing `_meta`. */
export function withRelatedTask(
  meta: unknown,
  taskId: string,
): Record<string, unknown> & { [RELATED_TASK_META_KEY]: { taskId: string } } {
  const base = typeof meta === "object" && meta !== null ? (meta as Record<string, unknown>) : {};
  return { ...base, [RELATED_TASK_META_KEY]: { taskId } };
}

/**
 * What `tasks/result` answers for a terminal task: exactly the original result plus the
 * related-task `_meta`, or throws the original JSON-RPC error. A cancelled task has no
 * result; it answers `-32603` with `data.status = "cancelled"` (the spec leaves it open).
 */
export function toLegacyPayload(record: TaskRecord): Record<string, unknown> {
  const outcome = record.outcome;
  if (outcome?.kind === "result") {
    return { ...outcome.result, _meta: withRelatedTask(outcome.result._meta, record.taskId) };
  }
  if (outcome?.kind === "error") {
    throw RpcError.from(outcome.error);
  }
  throw internalError(`Task ${record.taskId} was cancelled`, {
    taskId: record.taskId,
    status: record.status,
  });
}
