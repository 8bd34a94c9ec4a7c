import type { Owner } from "@mcp-tasks/core";
import { extractTraceContext, isRpcError, type RpcOutcome } from "@mcp-tasks/core";
import {
  type Implementation,
  McpServer,
  ProtocolError,
  Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { tasksServerCapabilities } from "./capabilities.js";
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

/**
 * Registers the extension on a `@modelcontextprotocol/server` 2.4 server for the modern
 * (2026-07-28) era: advertises `extensions["io.modelcontextprotocol/tasks"] = {}`, and owns
 * `tools/list`, `tools/call`, `tasks/get`, `tasks/update` and `tasks/cancel` (the `tasks/*`
 * methods through the explicit-schema form, which the 2.4 era gate admits). `tasks/result`
 * and `tasks/list` stay unregistered, so the SDK answers `-32601`.
 *
 * Call it before the server is connected (the capability is registered then); do not also
 * register tools on an `McpServer` passed here.
 */
export function bindTasksExtension(
  target: Server | McpServer,
  extension: TasksExtension,
  owner: OwnerSource,
): Server {
  const server = target instanceof McpServer ? target.server : target;
  server.registerCapabilities({ tools: {}, ...tasksServerCapabilities() });

  server.setRequestHandler("tools/list", () => extension.listTools() as never);
  server.setRequestHandler(
    "tools/call",
    async (request, ctx) =>
      // The SDK types do not know `resultType: "task"`; the 2026 codec passes it through.
      unwrap(await extension.callTool(requestContext(ctx, owner), request.params)) as never,
  );
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
