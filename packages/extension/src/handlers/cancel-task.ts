import { taskFailureToRpc } from "../errors.js";
import type { RpcOutcome, TasksRequestContext } from "../request.js";
import { type AckResult, TaskIdParamsSchema } from "../schemas.js";
import type { HandlerDeps } from "./deps.js";
import { guardTaskRequest } from "./guard.js";

/**
 * `tasks/cancel`: records a cooperative cancellation request and acknowledges at once, also
 * for a task that has already finished. The handler's signal fires; the task ends
 * `cancelled` if the handler stops, or keeps the outcome it reached first.
 */
export async function cancelTask(
  deps: HandlerDeps,
  ctx: TasksRequestContext,
  params: unknown,
): Promise<RpcOutcome<AckResult>> {
  try {
    const { taskId } = guardTaskRequest("tasks/cancel", ctx, TaskIdParamsSchema, params);
    await deps.service.requestCancel(ctx.owner, taskId);
    return { result: { resultType: "complete" } };
  } catch (error) {
    return { error: taskFailureToRpc(error) };
  }
}
