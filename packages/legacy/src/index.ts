/**
 * `@mcp-tasks/legacy`: the frozen MCP 2025-11-25 tasks facade over `@mcp-tasks/core`.
 *
 * @packageDocumentation
 */
export { JSONRPC, jsonRpcCodeOf, LegacyRpcError, toLegacyRpcError } from "./errors.js";
export {
  type LegacyCallToolResult,
  type LegacyRequestContext,
  LegacyTaskHandlers,
  type LegacyTaskHandlersOptions,
} from "./handlers.js";
export {
  createLegacyHandler,
  type LegacyFetchExtra,
  type LegacyHandler,
  type LegacyHandlerOptions,
} from "./http.js";
export {
  type DeliveryChannel,
  InputRegistry,
  type SideRequest,
} from "./input-bridge.js";
export {
  legacyStatusOf,
  taskSupportOf,
  toLegacyPayload,
  toLegacyTask,
  toLegacyTool,
} from "./projection.js";
export {
  CallToolParamsSchema,
  CreateTaskResultSchema,
  LEGACY_PROTOCOL_VERSION,
  LEGACY_TASKS_CAPABILITY,
  type LegacyTask,
  LegacyTaskSchema,
  type LegacyTool,
  LegacyToolSchema,
  ListTasksResultSchema,
  RELATED_TASK_META_KEY,
  type TaskSupport,
} from "./wire.js";
