/**
 * `@mcp-tasks/mcp-server`: task tools declared the MCP SDK way ({@link taskTool}: zod
 * schemas, annotations, icons, output schema) and mounted on a user's own `McpServer`
 * next to its tools ({@link mountTaskTools}, which the era facades use to attach tasks).
 *
 * @packageDocumentation
 */
export type { ServerEra, TasksServerFactory } from "./factory.js";
export { mountTaskTools, type TaskToolRouting, type ToolCallRequest } from "./mount.js";
export type { InferSchema, ToolSchema, ZodRawShape } from "./schema.js";
export {
  isTaskTool,
  type TaskSupport,
  type TaskTool,
  type TaskToolConfig,
  type TaskToolHandler,
  type TaskToolResult,
  taskTool,
} from "./task-tool.js";
