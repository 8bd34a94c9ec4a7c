import { isTaskError, RpcError, type RpcOutcome, toOutcome } from "@mcp-tasks/core";
import { ProtocolErrorCode } from "@modelcontextprotocol/server";
import { legacyFailure } from "../errors.js";
import { legacyStatusOf, toLegacyTask } from "../projection.js";
import { type LegacyTask, TaskIdParamsSchema } from "../wire.js";
import { type LegacyDeps, type LegacyRequestContext, parseParams } from "./deps.js";

/**
 * `tasks/cancel`: the task is `cancelled` before the reply (the handler's signal fires and
 * its late outcome is discarded); `-32602` on a terminal, unknown or foreign task.
 */
export function cancelTask(
  deps: LegacyDeps,
  ctx: LegacyRequestContext,
  params: unknown,
): Promise<RpcOutcome<LegacyTask>> {
  return toOutcome(
    async () => {
      const { taskId } = parseParams(TaskIdParamsSchema, params, "tasks/cancel");
      try {
        // One atomic write: the task is cancelled (and the request recorded) or it was terminal.
        const cancelled = await deps.service.cancelNow(
          ctx.owner,
          taskId,
          "The task was cancelled by request.",
        );
        return toLegacyTask(cancelled);
      } catch (error) {
        if (!isTaskError(error, "invalid_transition")) throw error;
        const after = await deps.service.get(ctx.owner, taskId);
        throw new RpcError(
          ProtocolErrorCode.InvalidParams,
          `Cannot cancel task: already in terminal status '${legacyStatusOf(after)}'`,
        );
      }
    },
    (error) => legacyFailure(error, deps.onError),
  );
}
