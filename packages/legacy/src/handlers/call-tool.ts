import {
  isRpcError,
  RpcError,
  type RpcOutcome,
  requestTraceContext,
  type TaskRecord,
  type ToolDefinition,
  toOutcome,
} from "@mcp-tasks/core";
import { ProtocolErrorCode } from "@modelcontextprotocol/server";
import { internalError, legacyFailure, legacyToolFailure, taskSupportMismatch } from "../errors.js";
import { toLegacyTask } from "../projection.js";
import { type CallToolParams, CallToolParamsSchema, type CreateTaskResult } from "../wire.js";
import { askClient } from "./ask-client.js";
import { type LegacyDeps, type LegacyRequestContext, parseParams } from "./deps.js";
import { runSynchronously } from "./run-sync.js";

/** A `tools/call` answer: the tool's result, or a `CreateTaskResult` for a task. */
export type LegacyCallToolResult = Record<string, unknown> | CreateTaskResult;

/** Bounds a preflight that never proceeds. */
const MAX_PREFLIGHT_ROUNDS = 10;

/**
 * `tools/call`. With `params.task` on a tool that allows tasks: starts the task and answers
 * `{ task }` (the requested `ttl` honoured within the TTL policy). Without it on a tool
 * that allows synchronous calls: runs the tool and answers its result. `required` without
 * `task` and `forbidden` with it answer `-32601`.
 */
export async function callTool(
  deps: LegacyDeps,
  ctx: LegacyRequestContext,
  params: unknown,
): Promise<RpcOutcome<LegacyCallToolResult>> {
  const prepared = await toOutcome(
    () => prepare(deps, ctx, params),
    (error) => legacyFailure(error, deps.onError),
  );
  if (isRpcError(prepared)) return prepared;
  const { tool, call } = prepared.result;
  if (call.task !== undefined) return startTaskCall(deps, ctx, tool, call);
  return toOutcome(
    () => runSynchronously(tool, call.arguments ?? {}, ctx),
    (error) => legacyToolFailure(error, deps.onError),
  );
}

/**
 * The task of a checked task-augmented `tools/call`: `tool` allows tasks and has no
 * preflight or is past it, `call` holds the arguments to run with. What {@link callTool}
 * does once its checks pass, and what a session's direct answer does for a call its match
 * and the session checked the same way (see `LegacySession.answerToolCall`).
 */
export function startTaskCall(
  deps: LegacyDeps,
  ctx: LegacyRequestContext,
  tool: ToolDefinition,
  call: CallToolParams,
): Promise<RpcOutcome<CreateTaskResult>> {
  return toOutcome(
    async () => ({ task: toLegacyTask(await startTask(deps, ctx, tool, call)) }),
    (error) => legacyFailure(error, deps.onError),
  );
}

/** The call checked against its tool, with the arguments its preflight settled on. */
async function prepare(
  deps: LegacyDeps,
  ctx: LegacyRequestContext,
  params: unknown,
): Promise<{ tool: ToolDefinition; call: CallToolParams }> {
  const call = parseParams(CallToolParamsSchema, params, "tools/call");
  const tool = checkTaskSupport(deps, call);
  // The parsed params are a fresh object: set in place, not `{ ...call, arguments }` (see
  // "Hot paths" in docs/architecture.md).
  call.arguments = await preflight(tool, call.arguments ?? {}, ctx);
  return { tool, call };
}

function checkTaskSupport(deps: LegacyDeps, call: CallToolParams): ToolDefinition {
  const tool = deps.tools.get(call.name);
  if (tool === undefined) {
    throw new RpcError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${call.name}`);
  }
  if (call.task !== undefined && tool.taskMode === "never") {
    throw taskSupportMismatch(
      `Tool ${tool.name} does not support task augmentation (taskSupport: 'forbidden')`,
    );
  }
  if (call.task === undefined && tool.taskMode === "always") {
    throw taskSupportMismatch(
      `Tool ${tool.name} requires task augmentation (taskSupport: 'required')`,
    );
  }
  return tool;
}

/**
 * Runs the tool's preflight, if any, before a task exists: its input requests go to the
 * client as plain side requests on the `tools/call` stream (no task to relate them to),
 * round after round, until it proceeds with the arguments to use.
 */
async function preflight(
  tool: ToolDefinition,
  args: Readonly<Record<string, unknown>>,
  ctx: LegacyRequestContext,
): Promise<Record<string, unknown>> {
  if (tool.preflight === undefined) return { ...args };
  const answers: Record<string, unknown> = {};
  for (let round = 0; round < MAX_PREFLIGHT_ROUNDS; round++) {
    const outcome = await tool.preflight(args, answers);
    if (outcome.kind === "proceed") return { ...outcome.arguments };
    for (const [key, request] of Object.entries(outcome.inputRequests)) {
      answers[key] = await askClient(request, ctx);
    }
  }
  throw internalError(`Tool ${tool.name} asked for input more than ${MAX_PREFLIGHT_ROUNDS} times`);
}

function startTask(
  deps: LegacyDeps,
  ctx: LegacyRequestContext,
  tool: ToolDefinition,
  call: CallToolParams,
): Promise<TaskRecord> {
  const traceContext = requestTraceContext(call, ctx.traceContext);
  return deps.runner.start(ctx.owner, {
    era: "2025-11-25",
    request: { toolName: tool.name, arguments: call.arguments ?? {} },
    ...(call.task?.ttl !== undefined && { ttlMs: call.task.ttl }),
    // The task's runs continue the creating request's trace, on whatever node.
    ...(traceContext !== null && { traceContext }),
  });
}
