import {
  linkSpanToTask,
  type RpcOutcome,
  requestTraceContext,
  setSpanError,
  startPollSpan,
  toOutcome,
} from "@mcp-tasks/core";
import { taskFailureToRpc } from "../errors.js";
import { toGetTaskResult } from "../projection.js";
import type { TasksRequestContext } from "../request.js";
import { type GetTaskResult, TaskIdParamsSchema } from "../schemas.js";
import type { HandlerDeps } from "./deps.js";
import { guardTaskRequest } from "./guard.js";

/**
 * `tasks/get`: the caller's task as a DetailedTask; `-32602` for unknown and foreign ids.
 * Traced as a short `tasks/get` span in the poll's own trace, linked to the task's.
 */
export function getTask(
  deps: HandlerDeps,
  ctx: TasksRequestContext,
  params: unknown,
): Promise<RpcOutcome<GetTaskResult>> {
  return toOutcome(
    async () => {
      const incoming = requestTraceContext(params, ctx.traceContext);
      const span = startPollSpan(deps.tracer, "tasks/get", incoming);
      try {
        const { taskId } = guardTaskRequest("tasks/get", ctx, TaskIdParamsSchema, params);
        const task = await deps.service.get(ctx.owner, taskId);
        linkSpanToTask(span, task);
        return toGetTaskResult(task);
      } catch (error) {
        setSpanError(span, error);
        throw error;
      } finally {
        span.end();
      }
    },
    (error) => taskFailureToRpc(error, deps.onError),
  );
}
