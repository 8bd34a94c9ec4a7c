import type { InputRequest, ToolDefinition } from "@mcp-tasks/core";

/**
 * What a tool's preflight decides for one `tools/call` round (multi-round-trip requests,
 * before any task exists): ask the client for input ephemerally, or proceed with
 * (possibly enriched) arguments.
 */
export type PreflightOutcome =
  | {
      readonly kind: "input_required";
      readonly inputRequests: Readonly<Record<string, InputRequest>>;
      readonly requestState?: string;
    }
  | { readonly kind: "proceed"; readonly arguments: Readonly<Record<string, unknown>> };

/**
 * Gathers input synchronously before the tool runs (or before its task is created), from
 * the `inputResponses` of the retried `tools/call`. Era-neutral: it sees only arguments and
 * answers by key.
 */
export type Preflight = (
  args: Readonly<Record<string, unknown>>,
  inputResponses: Readonly<Record<string, unknown>>,
) => PreflightOutcome | Promise<PreflightOutcome>;

/**
 * A core {@link ToolDefinition}, optionally with a {@link Preflight}: the composition of an
 * ephemeral `input_required` round with a task (round 1 asks, round 2 creates the task).
 */
export interface TasksTool extends ToolDefinition {
  readonly preflight?: Preflight;
}

/** A tool as `tools/list` shows it on the 2026-07-28 wire (there is no `execution` field). */
export interface WireTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/** Projects a tool definition onto the 2026-07-28 `Tool` shape. */
export function toWireTool(tool: ToolDefinition): WireTool {
  const wire: WireTool = {
    name: tool.name,
    inputSchema: { type: "object", ...tool.inputSchema },
  };
  if (tool.title !== undefined) wire.title = tool.title;
  if (tool.description !== undefined) wire.description = tool.description;
  return wire;
}
