import { pollTask, type RpcOutcome, requestTraceContext, toOutcome } from "@mcp-tasks/core";
import { taskFailureToRpc } from "../errors.js";
import { toGetTaskResult } from "../projection.js";
import type { TasksRequestContext } from "../request.js";
import { type GetTaskResult, TaskIdParamsSchema } from "../schemas.js";
import type { HandlerDeps } from "./deps.js";
import { guardTaskRequest } from "./guard.js";

/**
 * {@link TaskIdParamsSchema} with a shortcut for the shape nearly every poll has (an object
 * whose `taskId` is a string of an accepted length): only `taskId` is read from the
 * answer, so the zod run, which would copy every key, is skipped. Anything else is parsed
 * by the schema itself, so invalid params get exactly its error.
 */
const { minLength: TASK_ID_MIN, maxLength: TASK_ID_MAX } = TaskIdParamsSchema.shape.taskId;
const TASK_ID_PARAMS = {
  safeParse(params: unknown) {
    if (typeof params === "object" && params !== null && !Array.isArray(params)) {
      const taskId = (params as { taskId?: unknown }).taskId;
      if (
        typeof taskId === "string" &&
        taskId.length >= (TASK_ID_MIN ?? 0) &&
        taskId.length <= (TASK_ID_MAX ?? Number.POSITIVE_INFINITY)
      ) {
        return { success: true as const, data: params as { taskId: string } };
      }
    }
    return TaskIdParamsSchema.safeParse(params);
  },
} as unknown as typeof TaskIdParamsSchema;

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
      const { taskId } = guardTaskRequest("tasks/get", ctx, TASK_ID_PARAMS, params);
      const incoming = requestTraceContext(params, ctx.traceContext);
      return toGetTaskResult(await pollTask(deps, "tasks/get", ctx.owner, taskId, incoming));
    },
    (error) => taskFailureToRpc(error, deps.onError),
  );
}
