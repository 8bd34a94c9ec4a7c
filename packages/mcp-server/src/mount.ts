import type { ToolDefinition } from "@mcp-tasks/core";
import {
  type CallToolResult,
  fromJsonSchema,
  type McpServer,
  type RegisteredTool,
  type ServerContext,
  type StandardSchemaWithJSON,
} from "@modelcontextprotocol/server";
import { validate } from "./schema.js";
import { isTaskTool } from "./task-tool.js";

/** A `tools/call` request as the SDK hands it to a handler. */
export interface ToolCallRequest {
  readonly method: "tools/call";
  readonly params: {
    readonly name: string;
    readonly arguments?: Record<string, unknown>;
    readonly [key: string]: unknown;
  };
}

/** How an era serves the task tools mounted on an `McpServer`. */
export interface TaskToolRouting {
  /**
   * Whether this call of a task tool is the era's to answer (it creates a task, or refuses
   * the call as the era refuses it), rather than `McpServer`'s (answered in the request
   * through {@link TaskToolRouting.runInRequest}).
   */
  takesCall(tool: ToolDefinition, request: ToolCallRequest, ctx: ServerContext): boolean;
  /** Answers a call {@link TaskToolRouting.takesCall} took; its arguments are validated. */
  answerCall(tool: ToolDefinition, request: ToolCallRequest, ctx: ServerContext): Promise<unknown>;
  /** Runs the tool in the request, for `McpServer` (which validated the arguments). */
  runInRequest(
    tool: ToolDefinition,
    args: Record<string, unknown>,
    ctx: ServerContext,
  ): Promise<CallToolResult>;
  /** The 2025-11-25 `execution` the tool is listed with (the 2026 codec strips it). */
  execution?(tool: ToolDefinition): { taskSupport: "forbidden" | "optional" | "required" };
}

type RequestHandler = (request: unknown, ctx: ServerContext) => Promise<unknown>;

/** Servers already carrying task tools: attaching twice would wrap `tools/call` twice. */
const mounted = new WeakSet<McpServer>();

/** The SDK's stored `tools/call` handler: the one private read this package makes. */
function installedHandler(server: McpServer, method: string): RequestHandler | undefined {
  const handlers = (server.server as unknown as { _requestHandlers?: Map<string, RequestHandler> })
    ._requestHandlers;
  if (!(handlers instanceof Map)) {
    throw new Error(
      "@mcp-tasks/mcp-server cannot read this McpServer's request handlers: use @modelcontextprotocol/server ~2.4",
    );
  }
  return handlers.get(method);
}

function registrationError(tool: ToolDefinition, error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  if (/already registered/i.test(message)) {
    return new Error(
      `Cannot add task tool "${tool.name}": this McpServer already has a tool of that name. ` +
        "Rename one of them (a task tool is listed and called like any other tool).",
    );
  }
  if (/already exists/i.test(message)) {
    return new Error(
      `Cannot add task tool "${tool.name}": this server answers tools/call with its own handler ` +
        "(server.server.setRequestHandler), which would shadow the task tools or be shadowed by them. " +
        "Register its tools with registerTool instead.",
    );
  }
  return error instanceof Error ? error : new Error(message);
}

function standardSchemas(tool: ToolDefinition): {
  input: StandardSchemaWithJSON;
  output?: StandardSchemaWithJSON;
} {
  if (isTaskTool(tool)) return tool.schemas;
  return {
    input: fromJsonSchema({ type: "object", ...tool.inputSchema } as never),
    ...(tool.outputSchema !== undefined && {
      output: fromJsonSchema(tool.outputSchema as never),
    }),
  };
}

/**
 * Mounts task tools on a user's `McpServer`, next to its own tools: each is registered with
 * `registerTool` (so `tools/list`, `Mcp-Param` checks, validation and `isError` answers are
 * the `McpServer`'s), and `tools/call` is wrapped so that the calls an era takes as tasks
 * go to it, after the `McpServer`'s own argument validation rule. Every other call, of
 * the server's tools or of a task tool answered in the request, reaches the `McpServer`'s
 * handler unchanged.
 *
 * Call it before the server is connected. Throws when the server is connected, already
 * carries task tools, has a tool of a task tool's name, or answers `tools/call` itself.
 */
export function mountTaskTools(
  server: McpServer,
  tools: readonly ToolDefinition[],
  routing: TaskToolRouting,
): void {
  if (server.isConnected()) {
    throw new Error("Attach tasks before the McpServer is connected (inside its factory).");
  }
  if (mounted.has(server)) throw new Error("Tasks are already attached to this McpServer.");
  if (tools.length === 0) {
    mounted.add(server);
    return;
  }
  const registered = new Map<string, { tool: ToolDefinition; entry: RegisteredTool }>();
  for (const tool of tools) {
    const schemas = standardSchemas(tool);
    let entry: RegisteredTool;
    try {
      entry = server.registerTool(
        tool.name,
        {
          ...(tool.title !== undefined && { title: tool.title }),
          ...(tool.description !== undefined && { description: tool.description }),
          inputSchema: schemas.input,
          ...(schemas.output !== undefined && { outputSchema: schemas.output }),
          ...(tool.annotations !== undefined && { annotations: tool.annotations }),
          ...(tool.icons !== undefined && { icons: tool.icons as never }),
          ...(tool._meta !== undefined && { _meta: { ...tool._meta } }),
        },
        (args: unknown, ctx: ServerContext) =>
          routing.runInRequest(tool, args as Record<string, unknown>, ctx),
      );
    } catch (error) {
      throw registrationError(tool, error);
    }
    // `registerTool` has no `execution` key; the SDK lists the field as set (2025-11-25).
    const execution = routing.execution?.(tool);
    if (execution !== undefined) entry.execution = execution;
    registered.set(tool.name, { tool, entry });
  }
  const original = installedHandler(server, "tools/call");
  if (original === undefined) throw new Error("The McpServer installed no tools/call handler.");
  server.server.setRequestHandler("tools/call", async (request, ctx) => {
    const call = request as unknown as ToolCallRequest;
    const mine = registered.get(call.params.name);
    if (mine === undefined || !mine.entry.enabled || !routing.takesCall(mine.tool, call, ctx)) {
      return (await original(request, ctx)) as never;
    }
    const schema = mine.entry.inputSchema;
    if (schema !== undefined) {
      const checked = await validate(schema, call.params.arguments ?? {});
      // The McpServer answers a bad call with its own `isError` result (it validates
      // first, so the tool does not run).
      if (!checked.ok) return (await original(request, ctx)) as never;
      const params = { ...call.params, arguments: checked.value as Record<string, unknown> };
      return (await routing.answerCall(mine.tool, { ...call, params }, ctx)) as never;
    }
    return (await routing.answerCall(mine.tool, call, ctx)) as never;
  });
  mounted.add(server);
}
