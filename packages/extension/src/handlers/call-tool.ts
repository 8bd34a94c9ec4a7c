import {
  type FailureReporter,
  type InputRequest,
  isRpcError,
  RpcError,
  type RpcOutcome,
  requestTraceContext,
  toOutcome,
} from "@mcp-tasks/core";
import { checkArguments } from "../arguments.js";
import { declaresTasksExtension } from "../capabilities.js";
import { MODERN_PROTOCOL_VERSION } from "../constants.js";
import {
  invalidParams,
  missingTasksExtension,
  RPC_ERROR,
  taskFailureToRpc,
  toolFailureToRpc,
} from "../errors.js";
import { toCreateTaskResult } from "../projection.js";
import type { TasksRequestContext } from "../request.js";
import { CallToolParamsSchema, type CreateTaskResult } from "../schemas.js";
import { InputRequiredSignal, syncTaskContext } from "../sync-context.js";
import type { TasksTool } from "../tool.js";
import type { HandlerDeps } from "./deps.js";

/** The ephemeral multi-round-trip result of a `tools/call` round that needs input. */
export interface InputRequiredToolResult {
  resultType: "input_required";
  inputRequests: Record<string, InputRequest>;
  requestState?: string;
}

/** A plain tool result, answered without a task. */
export type SyncToolResult = Record<string, unknown>;

/** What `tools/call` answers with. */
export type CallToolOutcome = CreateTaskResult | InputRequiredToolResult | SyncToolResult;

/** How a call is served, decided per request. */
export type Dispatch = "task" | "sync";

/**
 * The server-directed decision: a task when the tool allows one and *this request* declared
 * the extension; synchronous otherwise; `-32021` for a task-only tool without it.
 */
export function decideDispatch(tool: TasksTool, clientCapabilities: unknown): Dispatch {
  const declared = declaresTasksExtension(clientCapabilities);
  switch (tool.taskMode) {
    case "never":
      return "sync";
    case "optional":
      return declared ? "task" : "sync";
    case "always":
      if (!declared) {
        throw missingTasksExtension(`tool '${tool.name}' only runs as a task`);
      }
      return "task";
  }
}

function inputRequired(
  inputRequests: Readonly<Record<string, InputRequest>>,
  requestState?: string,
): InputRequiredToolResult {
  const result: InputRequiredToolResult = {
    resultType: "input_required",
    inputRequests: Object.fromEntries(
      Object.entries(inputRequests).map(([key, request]) => [key, { ...request }]),
    ),
  };
  if (requestState !== undefined) result.requestState = requestState;
  return result;
}

/**
 * `tools/call`: validates the call, runs the tool's preflight (ephemeral `input_required`
 * rounds), then either creates a task (returning the flat `CreateTaskResult` once the task is
 * durable) or runs the tool synchronously. A legacy `params.task` is ignored.
 */
export async function callTool(
  deps: HandlerDeps,
  ctx: TasksRequestContext,
  params: unknown,
): Promise<RpcOutcome<CallToolOutcome>> {
  const prepared = await toOutcome(
    () => prepare(deps, ctx, params),
    (error) => taskFailureToRpc(error, deps.onError),
  );
  if (isRpcError(prepared)) return prepared;
  if ("inputRequired" in prepared.result) return { result: prepared.result.inputRequired };
  const { tool, args, dispatch } = prepared.result;
  if (dispatch === "sync") return runSynchronously(tool, args, ctx, deps.onError);
  return startToolTask(deps, ctx, tool, args, params);
}

/**
 * The task of a checked `tools/call` that becomes one: `tool` without a preflight or past it,
 * `args` its checked arguments, `params` the call's (for its trace context). What
 * {@link callTool} does once its checks pass, and what the node handler's direct answer does
 * for a call its match has checked the same way (see `matchDirectToolCall`).
 */
export function startToolTask(
  deps: HandlerDeps,
  ctx: TasksRequestContext,
  tool: TasksTool,
  args: Readonly<Record<string, unknown>>,
  params: unknown,
): Promise<RpcOutcome<CreateTaskResult>> {
  return toOutcome(
    async () => {
      const traceContext = requestTraceContext(params, ctx.traceContext);
      const record = await deps.runner.start(ctx.owner, {
        era: MODERN_PROTOCOL_VERSION,
        request: { toolName: tool.name, arguments: args },
        // The task's runs continue the creating request's trace, on whatever node.
        ...(traceContext !== null && { traceContext }),
      });
      return toCreateTaskResult(record);
    },
    (error) => taskFailureToRpc(error, deps.onError),
  );
}

/** A checked call ready to run, or the preflight's ephemeral request for input. */
type Prepared =
  | { tool: TasksTool; args: Readonly<Record<string, unknown>>; dispatch: Dispatch }
  | { inputRequired: InputRequiredToolResult };

async function prepare(
  deps: HandlerDeps,
  ctx: TasksRequestContext,
  params: unknown,
): Promise<Prepared> {
  const parsed = CallToolParamsSchema.safeParse(params ?? {});
  if (!parsed.success)
    throw invalidParams("tools/call needs a string 'name' and object 'arguments'");
  const tool = deps.tools.get(parsed.data.name);
  if (tool === undefined) throw invalidParams(`Unknown tool: ${parsed.data.name}`);
  let args = parsed.data.arguments ?? {};
  const problem = checkArguments(tool, args);
  if (problem !== null) throw invalidParams(`${tool.name}: ${problem}`);
  const dispatch = decideDispatch(tool, ctx.clientCapabilities);
  if (tool.preflight) {
    const outcome = await tool.preflight(args, ctx.inputResponses ?? {});
    if (outcome.kind === "input_required") {
      return { inputRequired: inputRequired(outcome.inputRequests, outcome.requestState) };
    }
    args = outcome.arguments;
  }
  return { tool, args, dispatch };
}

/** Runs the tool in the request; its input requests become an ephemeral round. */
async function runSynchronously(
  tool: TasksTool,
  args: Readonly<Record<string, unknown>>,
  ctx: TasksRequestContext,
  report: FailureReporter,
): Promise<RpcOutcome<CallToolOutcome>> {
  const signal = ctx.signal ?? new AbortController().signal;
  try {
    const result = await tool.run(
      args,
      syncTaskContext(ctx.owner, signal, ctx.inputResponses ?? {}),
    );
    if (typeof result !== "object" || result === null || Array.isArray(result)) {
      throw new RpcError(RPC_ERROR.INTERNAL_ERROR, "The tool returned no result object");
    }
    const { resultType: _drop, ...plain } = result as Record<string, unknown>;
    return { result: plain };
  } catch (error) {
    if (error instanceof InputRequiredSignal) return { result: inputRequired(error.inputRequests) };
    return { error: toolFailureToRpc(error, report) };
  }
}
