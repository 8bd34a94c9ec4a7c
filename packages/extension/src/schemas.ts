import { z } from "zod";

/**
 * Wire schemas of the 2026-07-28 tasks extension (zod 4): the params this facade accepts and
 * the shapes its projections produce. Params schemas are loose (unknown keys such as `_meta`
 * pass through); result schemas are strict about what must and must not be present.
 */

const TASK_ID_MAX = 512;

/** `params` of `tasks/get` and `tasks/cancel`. */
export const TaskIdParamsSchema = z.looseObject({
  taskId: z.string().min(1).max(TASK_ID_MAX),
});

/** `params` of `tasks/update`, with `inputResponses` as the client sent it. */
export const UpdateTaskParamsSchema = z.looseObject({
  taskId: z.string().min(1).max(TASK_ID_MAX),
  inputResponses: z.record(z.string(), z.looseObject({})).optional(),
});

/** One bare input response (an `ElicitResult`, `CreateMessageResult` or `ListRootsResult`). */
export const InputResponsesSchema = z.record(z.string().min(1).max(256), z.looseObject({}));

/** `params` of `tools/call` as far as this facade reads them (a legacy `task` is ignored). */
export const CallToolParamsSchema = z.looseObject({
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()).optional(),
});

/** `params` of a `subscriptions/listen` asking for task notifications. */
export const TaskListenParamsSchema = z.looseObject({
  notifications: z.looseObject({
    taskIds: z.array(z.string().min(1).max(TASK_ID_MAX)).max(1000).optional(),
  }),
});

const IsoTimestamp = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
const PositiveInt = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/** The era-2 `Task` fields: flat, ms-suffixed, ISO timestamps. */
export const WireTaskSchema = z.strictObject({
  taskId: z.string().min(1),
  status: z.enum(["working", "input_required", "completed", "failed", "cancelled"]),
  statusMessage: z.string().optional(),
  createdAt: IsoTimestamp,
  lastUpdatedAt: IsoTimestamp,
  ttlMs: PositiveInt.nullable(),
  pollIntervalMs: PositiveInt.optional(),
});

/** `CreateTaskResult`: `Result & Task & { resultType: "task" }`, no nested `task`. */
export const CreateTaskResultSchema = WireTaskSchema.extend({
  resultType: z.literal("task"),
});

/** An input request embedded in a task (no `jsonrpc`/`id`). */
export const WireInputRequestSchema = z.looseObject({
  method: z.enum(["elicitation/create", "sampling/createMessage", "roots/list"]),
  params: z.record(z.string(), z.unknown()).optional(),
});

/** A JSON-RPC error object as inlined on a failed task. */
export const WireErrorSchema = z.strictObject({
  code: z.number().int(),
  message: z.string(),
  data: z.unknown().optional(),
});

/** The inlined result of a completed `tools/call` task: a 2026 `CallToolResult`. */
export const InlinedToolResultSchema = z.looseObject({
  content: z.array(z.looseObject({ type: z.string() })),
  isError: z.boolean().optional(),
  resultType: z.literal("complete"),
});

/** `DetailedTask`: the task plus exactly the field its status calls for. */
export const DetailedTaskSchema = z.discriminatedUnion("status", [
  WireTaskSchema.extend({ status: z.literal("working") }),
  WireTaskSchema.extend({
    status: z.literal("input_required"),
    inputRequests: z.record(z.string(), WireInputRequestSchema),
  }),
  WireTaskSchema.extend({ status: z.literal("completed"), result: InlinedToolResultSchema }),
  WireTaskSchema.extend({ status: z.literal("failed"), error: WireErrorSchema }),
  WireTaskSchema.extend({ status: z.literal("cancelled") }),
]);

/** The `tasks/get` result: a DetailedTask with `resultType: "complete"`. */
export const GetTaskResultSchema = z.intersection(
  DetailedTaskSchema,
  z.looseObject({ resultType: z.literal("complete") }),
);

/** The `tasks/update` and `tasks/cancel` acknowledgement. */
export const AckResultSchema = z.strictObject({ resultType: z.literal("complete") });

export type WireTask = z.infer<typeof WireTaskSchema>;
export type CreateTaskResult = z.infer<typeof CreateTaskResultSchema>;
export type DetailedTask = z.infer<typeof DetailedTaskSchema>;
export type GetTaskResult = DetailedTask & { resultType: "complete" };
export type AckResult = z.infer<typeof AckResultSchema>;
