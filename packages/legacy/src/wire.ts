import { z } from "zod";

/** `_meta` key tying a message to a task (2025-11-25 §Associating Task-Related Messages). */
export const RELATED_TASK_META_KEY = "io.modelcontextprotocol/related-task";

/** The protocol revision this facade speaks. */
export const LEGACY_PROTOCOL_VERSION = "2025-11-25";

/** `Task.status` on the 2025-11-25 wire. */
export const LegacyTaskStatusSchema = z.enum([
  "working",
  "input_required",
  "completed",
  "failed",
  "cancelled",
]);

/** `Task` (schema/2025-11-25): `ttl` is required and nullable, `pollInterval` optional. */
export const LegacyTaskSchema = z.object({
  taskId: z.string(),
  status: LegacyTaskStatusSchema,
  statusMessage: z.string().optional(),
  createdAt: z.string(),
  lastUpdatedAt: z.string(),
  ttl: z.number().int().nullable(),
  pollInterval: z.number().int().optional(),
});
export type LegacyTask = z.infer<typeof LegacyTaskSchema>;

/** `CreateTaskResult`: the task nested under `task`. */
export const CreateTaskResultSchema = z.looseObject({ task: LegacyTaskSchema });
export type CreateTaskResult = z.infer<typeof CreateTaskResultSchema>;

/** `tasks/list` result. */
export const ListTasksResultSchema = z.looseObject({
  tasks: z.array(LegacyTaskSchema),
  nextCursor: z.string().optional(),
});
export type ListTasksResult = z.infer<typeof ListTasksResultSchema>;

/** `ToolExecution.taskSupport`. */
export const TaskSupportSchema = z.enum(["forbidden", "optional", "required"]);
export type TaskSupport = z.infer<typeof TaskSupportSchema>;

/** A `Tool` as `tools/list` returns it in this era. */
export const LegacyToolSchema = z.looseObject({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.looseObject({ type: z.literal("object") }),
  execution: z.object({ taskSupport: TaskSupportSchema }),
});
export type LegacyTool = z.infer<typeof LegacyToolSchema>;

const ProgressTokenSchema = z.union([z.string(), z.number()]);

/** `params` of `tasks/get`, `tasks/result`, `tasks/cancel`; `_meta` is ignored. */
export const TaskIdParamsSchema = z.looseObject({ taskId: z.string().min(1) });

/** `params` of `tasks/list`. */
export const ListTasksParamsSchema = z.looseObject({ cursor: z.string().optional() }).optional();

/** `params.task` (TaskMetadata). */
export const TaskMetadataSchema = z.looseObject({ ttl: z.number().int().optional() });

/** `params` of a (possibly task-augmented) `tools/call`. */
export const CallToolParamsSchema = z.looseObject({
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()).optional(),
  task: TaskMetadataSchema.optional(),
  _meta: z.looseObject({ progressToken: ProgressTokenSchema.optional() }).optional(),
});
export type CallToolParams = z.infer<typeof CallToolParamsSchema>;

/** `notifications/tasks/status` params: the full Task. */
export const TaskStatusNotificationParamsSchema = LegacyTaskSchema;

/** The side requests a 2025-11-25 server may send a client on a task's behalf. */
export const SIDE_REQUEST_METHODS = Object.freeze([
  "elicitation/create",
  "sampling/createMessage",
  "roots/list",
] as const);
export type SideRequestMethod = (typeof SIDE_REQUEST_METHODS)[number];

/** Which client capability (declared in `initialize`) each side request needs. */
export const SIDE_REQUEST_CAPABILITY: Readonly<Record<SideRequestMethod, string>> = Object.freeze({
  "elicitation/create": "elicitation",
  "sampling/createMessage": "sampling",
  "roots/list": "roots",
});

/** The capabilities this facade advertises in `initialize`. */
export const LEGACY_TASKS_CAPABILITY = Object.freeze({
  list: {},
  cancel: {},
  requests: { tools: { call: {} } },
});

/** True when `method` is a side request a 2025-11-25 server may send. */
export function isSideRequestMethod(method: string): method is SideRequestMethod {
  return (SIDE_REQUEST_METHODS as readonly string[]).includes(method);
}
