import {
  extractTraceContext,
  isRpcError,
  type Owner,
  RpcError,
  type RpcOutcome,
  type TraceContext,
} from "@mcp-tasks/core";
import { mountTaskTools } from "@mcp-tasks/mcp-server";
import type { McpServer, Server, ServerContext } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { DeliveryChannel } from "../delivery-channel.js";
import type { LegacyRequestContext } from "../handlers/deps.js";
import type { LegacyTaskHandlers } from "../handlers.js";
import { taskSupportOf } from "../projection.js";
import { CreateTaskResultSchema } from "../wire.js";
import { anySignal, type SendOverSdk } from "./channels.js";

/** What the methods registered for a session need of it. */
export interface SessionMethodHooks {
  readonly owner: Owner;
  readonly handlers: LegacyTaskHandlers;
  /** A `tasks/result` channel for a request's side requests, sent with `send`. */
  channel(signal: AbortSignal, send: SendOverSdk): DeliveryChannel;
  /** Starts notifying about a task the session created. */
  track(
    task: { taskId: string; status: string; statusMessage?: string | undefined },
    progressToken: string | number | undefined,
  ): void;
  /** The client read the task (`tasks/get`): its notifier stops re-sending. */
  acknowledge(taskId: string): void;
}

/**
 * The W3C trace context of the HTTP request (`traceparent` / `tracestate` headers), or
 * `null`; a `traceparent` in the params' `_meta` wins over it in the handlers.
 */
function transportTraceContext(ctx: ServerContext): TraceContext | null {
  const headers = ctx.http?.req?.headers;
  if (!headers?.has("traceparent")) return null;
  return extractTraceContext({
    traceparent: headers.get("traceparent"),
    tracestate: headers.get("tracestate"),
  });
}

/** Throws the outcome's error (the SDK answers it as a JSON-RPC error) or returns its result. */
function unwrap<T>(outcome: RpcOutcome<T>): T {
  if (isRpcError(outcome)) throw RpcError.from(outcome.error);
  return outcome.result;
}

/**
 * Registers the 2025-11-25 task methods of a session on its SDK server: `tools/list` and
 * `tools/call` (or, on the user's `McpServer`, the task tools next to theirs), `tasks/get`,
 * `tasks/result`, `tasks/list` and `tasks/cancel`, each answered by the session's handlers
 * as the session's owner.
 */
export function registerSessionMethods(
  server: Server,
  mcp: McpServer | undefined,
  session: SessionMethodHooks,
): void {
  const handlers = session.handlers;
  const context = (ctx: ServerContext, withChannel: boolean): LegacyRequestContext => {
    const signal = anySignal(ctx.mcpReq.signal, ctx.http?.req?.signal);
    const send: SendOverSdk = (request, options) => ctx.mcpReq.send(request, options);
    const traceContext = transportTraceContext(ctx);
    return {
      owner: session.owner,
      signal,
      ...(withChannel && { channel: session.channel(signal, send) }),
      ...(traceContext !== null && { traceContext }),
    };
  };
  const startTask = async (params: unknown, ctx: ServerContext): Promise<never> => {
    const result = unwrap(await handlers.callTool(context(ctx, true), params));
    const created = CreateTaskResultSchema.safeParse(result);
    if (!created.success) return result as never;
    const progressToken = (
      (params as { _meta?: { progressToken?: string | number } })._meta as
        | { progressToken?: string | number }
        | undefined
    )?.progressToken;
    session.track(created.data.task, progressToken);
    // The 2025 codec of @modelcontextprotocol/server 2.4 requires `content` next to `task`.
    return { ...result, content: [] } as never;
  };
  if (mcp !== undefined) {
    // The user's McpServer keeps its tools; the task tools join them, and the calls with
    // `params.task` (or of a task-only tool, which this era then refuses) are ours.
    server.registerCapabilities({ tasks: handlers.capabilities.tasks });
    mountTaskTools(mcp, [...handlers.tools.values()], {
      takesCall: (tool, request) => request.params.task !== undefined || tool.taskMode === "always",
      answerCall: (_tool, request, ctx) => startTask(request.params, ctx),
      runInRequest: async (tool, args, ctx) =>
        unwrap(
          await handlers.callTool(context(ctx, true), { name: tool.name, arguments: args }),
        ) as never,
      execution: (tool) => ({ taskSupport: taskSupportOf(tool.taskMode) }),
    });
  } else {
    server.setRequestHandler("tools/list", () => handlers.listTools() as never);
    server.setRequestHandler("tools/call", (request, ctx) => startTask(request.params, ctx));
  }
  // The 2025 task methods are not in the SDK's typed method map: register them with an
  // explicit (pass-through) params schema; the handlers validate with the wire schemas.
  const anyParams = { params: z.unknown() };
  server.setRequestHandler("tasks/get", anyParams, async (params, ctx) => {
    const task = unwrap(await handlers.getTask(context(ctx, false), params));
    session.acknowledge(task.taskId);
    return task;
  });
  server.setRequestHandler("tasks/result", anyParams, async (params, ctx) =>
    unwrap(await handlers.getTaskResult(context(ctx, true), params)),
  );
  server.setRequestHandler("tasks/list", anyParams, async (params, ctx) =>
    unwrap(await handlers.listTasks(context(ctx, false), params)),
  );
  server.setRequestHandler("tasks/cancel", anyParams, async (params, ctx) =>
    unwrap(await handlers.cancelTask(context(ctx, false), params)),
  );
}
