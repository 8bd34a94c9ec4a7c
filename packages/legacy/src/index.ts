/**
 * `@mcp-tasks/legacy`: the frozen MCP 2025-11-25 tasks facade over `@mcp-tasks/core`:
 * transport-agnostic handlers ({@link LegacyTaskHandlers}), one function per method, and
 * a sessionful endpoint on `@modelcontextprotocol/server` 2.4 ({@link createLegacyHandler}).
 *
 * @packageDocumentation
 */
export type { DeliveryChannel, SideRequest } from "./delivery-channel.js";
export { jsonRpcCodeOf } from "./errors.js";
export type { LegacyCallToolResult } from "./handlers/call-tool.js";
export type { LegacyRequestContext } from "./handlers/deps.js";
export {
  LegacyTaskHandlers,
  type LegacyTaskHandlersOptions,
  type LegacyTaskMethods,
} from "./handlers.js";
export {
  createLegacyHandler,
  type LegacyDirectAnswer,
  type LegacyDirectRequest,
  type LegacyFetchExtra,
  type LegacyHandler,
  type LegacyHandlerOptions,
} from "./http/endpoint.js";
export { InputRegistry } from "./input-registry.js";
export {
  legacyStatusOf,
  taskSupportOf,
  toLegacyPayload,
  toLegacyTask,
  toLegacyTool,
} from "./projection.js";
export {
  CallToolParamsSchema,
  type CreateTaskResult,
  CreateTaskResultSchema,
  LEGACY_PROTOCOL_VERSION,
  LEGACY_TASKS_CAPABILITY,
  type LegacyTask,
  LegacyTaskSchema,
  type LegacyTool,
  LegacyToolSchema,
  type ListTasksResult,
  ListTasksResultSchema,
  RELATED_TASK_META_KEY,
  type SideRequestMethod,
  type TaskSupport,
  TaskSupportSchema,
} from "./wire.js";
