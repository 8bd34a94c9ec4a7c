import type { TaskContext, TaskMode, ToolDefinition, ToolExecution } from "@mcp-tasks/core";
import type {
  CallToolResult,
  Icon,
  StandardSchemaWithJSON,
  ToolAnnotations,
} from "@modelcontextprotocol/server";
import {
  type InferSchema,
  inputJsonSchema,
  normalizeSchema,
  outputJsonSchema,
  type ToolSchema,
  validate,
} from "./schema.js";

/** How a task tool may be called, as 2025-11-25 `execution.taskSupport` says it. */
export type TaskSupport = "optional" | "required";

const TASK_MODE: Readonly<Record<TaskSupport, TaskMode>> = {
  optional: "optional",
  required: "always",
};

/**
 * A task tool's declaration, in the shape of `McpServer.registerTool`'s config, plus how it
 * runs as a task.
 */
export interface TaskToolConfig<
  In extends ToolSchema | undefined = undefined,
  Out extends ToolSchema | undefined = undefined,
> {
  readonly title?: string;
  readonly description?: string;
  /** The arguments: `z.object({...})` (or any Standard Schema with JSON Schema), or a raw shape. */
  readonly inputSchema?: In;
  /** The result's `structuredContent`; when set, every non-error result must carry it. */
  readonly outputSchema?: Out;
  readonly annotations?: ToolAnnotations;
  readonly icons?: Icon[];
  readonly _meta?: Record<string, unknown>;
  /**
   * `optional` (default): a task when the client can take one (a 2026-07-28 client that
   * declared the extension, a 2025-11-25 call with `params.task`), else answered in the
   * request; `required`: only ever a task.
   */
  readonly taskSupport?: TaskSupport;
  /** Re-runs of the task, for tools that are safe to run again from the start. */
  readonly retry?: ToolExecution["retry"];
  /** How long one run may take, in ms. */
  readonly deadlineMs?: number;
}

/** The result a task tool returns: an MCP `CallToolResult`. */
export type TaskToolResult = CallToolResult;

/**
 * A task tool's body: the validated (typed) arguments, and the task's context (status
 * messages, progress, `requireInput`, the cancel signal).
 */
export type TaskToolHandler<In extends ToolSchema | undefined> = (
  args: InferSchema<In>,
  task: TaskContext,
) => TaskToolResult | Promise<TaskToolResult>;

/**
 * A tool made by {@link taskTool}: a core `ToolDefinition` (it runs anywhere one does) that
 * keeps its Standard Schemas, so that mounting it on an `McpServer` registers it exactly as
 * `registerTool` would.
 */
export interface TaskTool extends ToolDefinition {
  readonly schemas: {
    readonly input: StandardSchemaWithJSON;
    readonly output?: StandardSchemaWithJSON;
  };
}

/** True for a tool made by {@link taskTool}. */
export function isTaskTool(tool: ToolDefinition): tool is TaskTool {
  return "schemas" in tool && typeof (tool as TaskTool).schemas?.input === "object";
}

function errorResult(text: string): TaskToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

const EMPTY_OBJECT = { type: "object", properties: {} } as const;

/**
 * Declares a tool that runs as a task, the way `McpServer.registerTool` declares a tool: a
 * zod input schema types the handler's arguments, and `title`, `annotations`, `icons`,
 * `_meta` and `outputSchema` are listed unchanged in both eras. Arguments are validated as
 * `McpServer` validates them before a task is created (a bad call gets the same
 * `isError` "Input validation error: …" result), and a result is checked against
 * `outputSchema` as `McpServer` checks it ("Output validation error: …").
 *
 * @example
 * ```ts
 * const slowReport = taskTool(
 *   "slow_report",
 *   { description: "Writes a report", inputSchema: z.object({ topic: z.string() }) },
 *   async ({ topic }, task) => {
 *     await task.setStatusMessage(`researching ${topic}`);
 *     return { content: [{ type: "text", text: `Report on ${topic}` }] };
 *   },
 * );
 * ```
 */
export function taskTool<
  In extends ToolSchema | undefined = undefined,
  Out extends ToolSchema | undefined = undefined,
>(name: string, config: TaskToolConfig<In, Out>, handler: TaskToolHandler<In>): TaskTool {
  const input =
    config.inputSchema === undefined
      ? undefined
      : normalizeSchema(config.inputSchema, `Tool ${name}: inputSchema`);
  const output =
    config.outputSchema === undefined
      ? undefined
      : normalizeSchema(config.outputSchema, `Tool ${name}: outputSchema`);
  const execution: ToolExecution = {
    ...(config.retry !== undefined && { retry: config.retry }),
    ...(config.deadlineMs !== undefined && { deadlineMs: config.deadlineMs }),
  };
  const inputSchema = input === undefined ? EMPTY_OBJECT : inputJsonSchema(input);

  async function run(args: Readonly<Record<string, unknown>>, task: TaskContext) {
    let typed: unknown = args;
    if (input !== undefined) {
      // Checked before the task was created; again here, since a stored task may be run
      // by a later deployment whose schema changed, and to apply the schema's transforms.
      const checked = await validate(input, args);
      if (!checked.ok) {
        return errorResult(
          `Input validation error: Invalid arguments for tool ${name}: ${checked.message}`,
        );
      }
      typed = checked.value;
    }
    const result = await handler(typed as InferSchema<In>, task);
    if (output === undefined || result.isError === true) return result;
    if (result.structuredContent === undefined) {
      return errorResult(
        `Output validation error: Tool ${name} has an output schema but no structured content was provided`,
      );
    }
    const checked = await validate(output, result.structuredContent);
    if (!checked.ok) {
      return errorResult(
        `Output validation error: Invalid structured content for tool ${name}: ${checked.message}`,
      );
    }
    return result;
  }

  return {
    name,
    ...(config.title !== undefined && { title: config.title }),
    ...(config.description !== undefined && { description: config.description }),
    inputSchema,
    taskMode: TASK_MODE[config.taskSupport ?? "optional"],
    run,
    ...(Object.keys(execution).length > 0 && { execution }),
    ...(config.annotations !== undefined && { annotations: config.annotations }),
    ...(config.icons !== undefined && { icons: config.icons }),
    ...(output !== undefined && { outputSchema: outputJsonSchema(output) }),
    ...(config._meta !== undefined && { _meta: config._meta }),
    schemas: {
      input: input ?? normalizeSchema({}, `Tool ${name}: inputSchema`),
      ...(output !== undefined && { output }),
    },
  };
}
