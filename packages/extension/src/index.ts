/**
 * `@mcp-tasks/extension`: the 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`)
 * over `@mcp-tasks/core` — transport-agnostic handlers ({@link TasksExtension}), one
 * function per method, a binding for `@modelcontextprotocol/server` 2.4
 * ({@link bindTasksExtension}, {@link createTasksServer}) and task subscriptions over
 * `subscriptions/listen` ({@link handleTaskListenRequest}), and a lean `node:http` handler
 * ({@link createNodeTasksHandler}) that answers the polling methods without the SDK round trip.
 *
 * @packageDocumentation
 */
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
  TasksExtension,
  type TasksExtensionMethods,
  type TasksExtensionOptions,
} from "./extension.js";
export type {
  CallToolOutcome,
  InputRequiredToolResult,
  SyncToolResult,
} from "./handlers/call-tool.js";
export type {
  StreamNotification,
  TaskSubscription,
  TaskSubscriptionOptions,
} from "./handlers/listen.js";
export { handleTaskListenRequest, type TaskListenOptions } from "./listen-http.js";
export { discardBody, type JsonBody, readJsonBody } from "./node/body.js";
export {
  createNodeTasksHandler,
  type NodeTasksHandler,
  type NodeTasksHandlerOptions,
  type NodeTasksRequestOptions,
} from "./node/handler.js";
export { MAX_JSON_DEPTH, nestsDeeperThan } from "./node/json-depth.js";
export { TOO_DEEP_ANSWER } from "./node/refusals.js";
export { webRequestFor, writeJson, writeWebResponse } from "./node/web-bridge.js";
export type { TasksRequestContext } from "./request.js";
export {
  type AckResult,
  AckResultSchema,
  type CreateTaskResult,
  CreateTaskResultSchema,
  type DetailedTask,
  DetailedTaskSchema,
  type GetTaskResult,
  GetTaskResultSchema,
  TaskIdParamsSchema,
  UpdateTaskParamsSchema,
  type WireTask,
  WireTaskSchema,
} from "./schemas.js";
export type { TasksTool, WireTool } from "./tool.js";
