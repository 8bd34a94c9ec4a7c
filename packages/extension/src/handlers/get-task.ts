import { type RpcOutcome, toOutcome } from "@mcp-tasks/core";
import { taskFailureToRpc } from "../errors.js";
import { toGetTaskResult } from "../projection.js";
import type { TasksRequestContext } from "../request.js";
import { type GetTaskResult, TaskIdParamsSchema } from "../schemas.js";
import type { HandlerDeps } from "./deps.js";
import { guardTaskRequest } from "./guard.js";

/** `tasks/get`: the caller's task as a DetailedTask; `-32602` for unknown and foreign ids. */
export function getTask(
  deps: HandlerDeps,
  ctx: TasksRequestContext,
  params: unknown,
): Promise<RpcOutcome<GetTaskResult>> {
  return toOutcome(async () => {
    const { taskId } = guardTaskRequest("tasks/get", ctx, TaskIdParamsSchema, params);
    return toGetTaskResult(await deps.service.get(ctx.owner, taskId));
  }, taskFailureToRpc);
}
