import { type RpcOutcome, toOutcome } from "@mcp-tasks/core";
import { invalidParams, taskFailureToRpc } from "../errors.js";
import type { TasksRequestContext } from "../request.js";
import { type AckResult, InputResponsesSchema, UpdateTaskParamsSchema } from "../schemas.js";
import type { HandlerDeps } from "./deps.js";
import { guardTaskRequest } from "./guard.js";

/**
 * `tasks/update`: hands the answers to the task by key and acknowledges. Partial answers are
 * fine; unknown and already-answered keys are ignored, and so is input for a task that has
 * finished. The answers come from `ctx.inputResponses` when the transport lifted them off
 * the params (the SDK does), else from `params.inputResponses`.
 */
export function updateTask(
  deps: HandlerDeps,
  ctx: TasksRequestContext,
  params: unknown,
): Promise<RpcOutcome<AckResult>> {
  return toOutcome(
    async () => {
      const { taskId, inputResponses } = guardTaskRequest(
        "tasks/update",
        ctx,
        UpdateTaskParamsSchema,
        params,
      );
      const parsed = InputResponsesSchema.safeParse(ctx.inputResponses ?? inputResponses ?? {});
      if (!parsed.success) throw invalidParams("inputResponses must map keys to response objects");
      // A finished task accepts nothing, like an unknown key: the store ignores such input.
      await deps.service.submitInput(ctx.owner, taskId, parsed.data);
      return { resultType: "complete" };
    },
    (error) => taskFailureToRpc(error, deps.onError),
  );
}
