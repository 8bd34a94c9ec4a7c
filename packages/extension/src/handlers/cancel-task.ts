import { type RpcOutcome, toOutcome } from "@mcp-tasks/core";
import { taskFailureToRpc } from "../errors.js";
import type { TasksRequestContext } from "../request.js";
import { type AckResult, TaskIdParamsSchema } from "../schemas.js";
import type { HandlerDeps } from "./deps.js";
import { guardTaskRequest } from "./guard.js";

/**
 * `tasks/cancel`: records a cooperative cancellation request and acknowledges at once, also
 * for a task that has already finished. The handler's signal fires; the task ends
 * `cancelled` if the handler stops, or keeps the outcome it reached first.
 */
export function cancelTask(
  deps: HandlerDeps,
  ctx: TasksRequestContext,
  params: unknown,
): Promise<RpcOutcome<AckResult>> {
  return toOutcome(
    async () => {
      const { taskId } = guardTaskRequest("tasks/cancel", ctx, TaskIdParamsSchema, params);
      await deps.service.requestCancel(ctx.owner, taskId);
      return { resultType: "complete" };
    },
    (error) => taskFailureToRpc(error, deps.onError),
  );
}
