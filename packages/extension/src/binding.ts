import type { Owner } from "@mcp-tasks/core";
import { extractTraceContext, isRpcError, type RpcOutcome } from "@mcp-tasks/core";
import { mountTaskTools, type TaskToolRouting } from "@mcp-tasks/mcp-server";
import {
  type Implementation,
  McpServer,
  ProtocolError,
  Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { declaresTasksExtension, tasksServerCapabilities } from "./capabilities.js";
import { CLIENT_CAPABILITIES_META_KEY } from "./constants.js";
import type { TasksExtension } from "./extension.js";
import type { TasksRequestContext } from "./request.js";
import { TaskIdParamsSchema, UpdateTaskParamsSchema } from "./schemas.js";

/** Who the caller is: a fixed owner (resolved per HTTP request), or derived per request. */
export type OwnerSource = Owner | ((ctx: ServerContext) => Owner);

const BASE64_HEADER = /^=\?base64\?(.*)\?=$/;

/** Decodes an `Mcp-Name` value (trimmed; `=?base64?…?=` form supported). */
export function decodeRoutingHeader(value: string | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  const encoded = BASE64_HEADER.exec(trimmed);
  return encoded ? Buffer.from(encoded[1] ?? "", "base64").toString("utf8") : trimmed;
}

function requestContext(ctx: ServerContext, owner: OwnerSource): TasksRequestContext {
  const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
  const routingName = decodeRoutingHeader(ctx.http?.req?.headers.get("mcp-name"));
  const requestState = ctx.mcpReq.requestState<string>();
  // `_meta.traceparent` (the SDK hands the handler `_meta` less the envelope keys), else the
  // W3C `traceparent` / `tracestate` headers of the HTTP request.
  const headers = ctx.http?.req?.headers;
  const traceContext =
    extractTraceContext(ctx.mcpReq._meta) ??
    (headers?.has("traceparent")
      ? extractTraceContext({
          traceparent: headers.get("traceparent"),
          tracestate: headers.get("tracestate"),
        })
      : null);
  return {
    owner: typeof owner === "function" ? owner(ctx) : owner,
    clientCapabilities: envelope[CLIENT_CAPABILITIES_META_KEY],
    signal: ctx.mcpReq.signal,
    ...(routingName !== undefined && { routingName }),
    ...(ctx.mcpReq.inputResponses !== undefined && { inputResponses: ctx.mcpReq.inputResponses }),
    ...(typeof requestState === "string" && { requestState }),
    ...(traceContext !== null && { traceContext }),
  };
}

function unwrap<T>(outcome: RpcOutcome<T>): T {
  if (isRpcError(outcome)) {
    throw new ProtocolError(outcome.error.code, outcome.error.message, outcome.error.data);
  }
  return outcome.result;
}

/** The tools/call answer of the extension, thrown as a JSON-RPC error when it is one. */
async function answerToolCall(
  extension: TasksExtension,
  ctx: ServerContext,
  owner: OwnerSource,
  params: unknown,
): Promise<never> {
  // The SDK types do not know `resultType: "task"`; the 2026 codec passes it through.
  return unwrap(await extension.callTool(requestContext(ctx, owner), params)) as never;
}

/** `tasks/get`, `tasks/update` and `tasks/cancel`, through the explicit-schema form. */
function bindTaskMethods(server: Server, extension: TasksExtension, owner: OwnerSource): void {
  server.setRequestHandler("tasks/get", { params: TaskIdParamsSchema }, async (params, ctx) =>
    unwrap(await extension.getTask(requestContext(ctx, owner), params)),
  );
  server.setRequestHandler(
    "tasks/update",
    { params: UpdateTaskParamsSchema },
    async (params, ctx) => unwrap(await extension.updateTask(requestContext(ctx, owner), params)),
  );
  server.setRequestHandler("tasks/cancel", { params: TaskIdParamsSchema }, async (params, ctx) =>
    unwrap(await extension.cancelTask(requestContext(ctx, owner), params)),
  );
}

/**
 * How the modern era serves task tools mounted on an `McpServer`: a call is the
 * extension's when it would be a task (the tool allows one and the request declared the
 * extension) or must be refused (`-32021` for a task-only tool without it); anything else
 * is answered in the request by the `McpServer`, through the tool's synchronous run.
 */
function modernRouting(extension: TasksExtension, owner: OwnerSource): TaskToolRouting {
  return {
    takesCall(tool, _request, ctx) {
      if (tool.taskMode === "never") return false;
      if (tool.taskMode === "always") return true;
      const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
      return declaresTasksExtension(envelope[CLIENT_CAPABILITIES_META_KEY]);
    },
    answerCall: (_tool, request, ctx) => answerToolCall(extension, ctx, owner, request.params),
    runInRequest: (tool, args, ctx) =>
      answerToolCall(extension, ctx, owner, { name: tool.name, arguments: args }),
  };
}

/**
 * Attaches the extension to a `@modelcontextprotocol/server` 2.4 server for the modern
 * (2026-07-28) era: advertises `extensions["io.modelcontextprotocol/tasks"] = {}` and
 * serves `tasks/get`, `tasks/update` and `tasks/cancel` (the explicit-schema form, which
 * the 2.4 era gate admits); `tasks/result` and `tasks/list` stay unregistered, so the SDK
 * answers `-32601`.
 *
 * - An **`McpServer`** keeps its own tools, prompts, resources, completions and logging:
 *   the extension's tools are registered on it with `registerTool` (see `mountTaskTools`
 *   of `@mcp-tasks/mcp-server`), and only the calls that become tasks are answered by the
 *   extension.
 * - A low-level **`Server`** gets `tools/list` and `tools/call` from the extension, and must
 *   not answer them itself (that throws, rather than silently shadowing its handlers).
 *
 * Call it before the server is connected (inside the factory of `createMcpHandler`).
 */
export function bindTasksExtension(
  target: Server | McpServer,
  extension: TasksExtension,
  owner: OwnerSource,
): Server {
  if (target instanceof McpServer) {
    target.server.registerCapabilities(tasksServerCapabilities());
    mountTaskTools(target, [...extension.tools.values()], modernRouting(extension, owner));
    bindTaskMethods(target.server, extension, owner);
    return target.server;
  }
  const server = target;
  for (const method of ["tools/list", "tools/call"] as const) {
    try {
      server.assertCanSetRequestHandler(method);
    } catch {
      throw new Error(
        `This Server already answers ${method}: the tasks extension would shadow it. ` +
          "Pass an McpServer (its tools are kept), or leave tools to the extension.",
      );
    }
  }
  server.registerCapabilities({ tools: {}, ...tasksServerCapabilities() });
  server.setRequestHandler("tools/list", () => extension.listTools() as never);
  server.setRequestHandler("tools/call", (request, ctx) =>
    answerToolCall(extension, ctx, owner, request.params),
  );
  bindTaskMethods(server, extension, owner);
  return server;
}

/** Options of {@link createTasksServer}. */
export interface CreateTasksServerOptions {
  /** The caller of this request (or how to derive it). */
  readonly owner: OwnerSource;
  /** Server name and version; default `mcp-tasks`. */
  readonly serverInfo?: Implementation;
  /** Instructions shown to the client in `server/discover`. */
  readonly instructions?: string;
}

/**
 * A fresh low-level SDK `Server` serving the extension: what a `createMcpHandler` factory
 * returns for each modern request.
 */
export function createTasksServer(
  extension: TasksExtension,
  options: CreateTasksServerOptions,
): Server {
  const server = new Server(options.serverInfo ?? { name: "mcp-tasks", version: "0.1.0" }, {
    capabilities: { tools: {}, ...tasksServerCapabilities() },
    ...(options.instructions !== undefined && { instructions: options.instructions }),
  });
  return bindTasksExtension(server, extension, options.owner);
}
