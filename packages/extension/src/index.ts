/**
 * `@mcp-tasks/extension`: the 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`)
 * over `@mcp-tasks/core` — transport-agnostic handlers ({@link TasksExtension}), a binding
 * for `@modelcontextprotocol/server` 2.4 ({@link bindTasksExtension},
 * {@link createTasksServer}) and task subscriptions over `subscriptions/listen`
 * ({@link handleTaskListenRequest}).
 *
 * @packageDocumentation
 */
export { checkArguments } from "./arguments.js";
export {
  bindTasksExtension,
  type CreateTasksServerOptions,
  createTasksServer,
  decodeRoutingHeader,
  type OwnerSource,
} from "./binding.js";
export { declaresTasksExtension, tasksServerCapabilities } from "./capabilities.js";
export {
  CLIENT_CAPABILITIES_META_KEY,
  MODERN_PROTOCOL_VERSION,
  PROTOCOL_VERSION_META_KEY,
  RELATED_TASK_META_KEY,
  SUBSCRIPTION_ID_META_KEY,
  TASKS_EXTENSION_ID,
} from "./constants.js";
export {
  headerMismatch,
  invalidParams,
  methodNotFound,
  missingTasksExtension,
  RPC_ERROR,
  RpcError,
  taskFailureToRpc,
  toolFailureToRpc,
} from "./errors.js";
export { TasksExtension, type TasksExtensionOptions } from "./extension.js";
export {
  type CallToolOutcome,
  type Dispatch,
  decideDispatch,
  type InputRequiredToolResult,
  type SyncToolResult,
} from "./handlers/call-tool.js";
export { asksForTaskIds, type StreamNotification, TaskSubscription } from "./handlers/listen.js";
export { handleTaskListenRequest, type TaskListenOptions } from "./listen-http.js";
export {
  isoTime,
  toCreateTaskResult,
  toDetailedTask,
  toGetTaskResult,
  toInlinedResult,
  toWireTask,
} from "./projection.js";
export { isRpcError, type RpcOutcome, type TasksRequestContext } from "./request.js";
export {
  type AckResult,
  AckResultSchema,
  CallToolParamsSchema,
  type CreateTaskResult,
  CreateTaskResultSchema,
  type DetailedTask,
  DetailedTaskSchema,
  type GetTaskResult,
  GetTaskResultSchema,
  InputResponsesSchema,
  TaskIdParamsSchema,
  TaskListenParamsSchema,
  UpdateTaskParamsSchema,
  type WireTask,
  WireTaskSchema,
} from "./schemas.js";
export { InputRequiredSignal, syncTaskContext } from "./sync-context.js";
export { type TasksTool, toWireTool, type WireTool } from "./tool.js";
