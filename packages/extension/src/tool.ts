import { listedToolFields, type ToolDefinition } from "@mcp-tasks/core";

/**
 * A tool as the extension facade serves it: core's {@link ToolDefinition}, whose optional
 * `preflight` composes ephemeral `input_required` rounds with a task.
 */
export type TasksTool = ToolDefinition;

/** A tool as `tools/list` shows it on the 2026-07-28 wire (there is no `execution` field). */
export interface WireTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  icons?: Record<string, unknown>[];
  outputSchema?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

/** Projects a tool definition onto the 2026-07-28 `Tool` shape. */
export function toWireTool(tool: ToolDefinition): WireTool {
  const { title, description, ...rest } = listedToolFields(tool);
  return {
    name: tool.name,
    ...(title !== undefined && { title: title as string }),
    ...(description !== undefined && { description: description as string }),
    inputSchema: { type: "object", ...tool.inputSchema },
    ...rest,
  };
}
