import { pollTask, type RpcOutcome, requestTraceContext, toOutcome } from "@mcp-tasks/core";
import { legacyFailure } from "../errors.js";
import { toLegacyTask } from "../projection.js";
import { type LegacyTask, TaskIdParamsSchema } from "../wire.js";
import { type LegacyDeps, type LegacyRequestContext, parseParams } from "./deps.js";

/** `tasks/get`: the task; `-32602` for unknown and foreign ids alike. */
export function getTask(
  deps: LegacyDeps,
  ctx: LegacyRequestContext,
  params: unknown,
): Promise<RpcOutcome<LegacyTask>> {
  return toOutcome(
    async () => {
      const { taskId } = parseParams(TaskIdParamsSchema, params, "tasks/get");
      const incoming = requestTraceContext(params, ctx.traceContext);
      return toLegacyTask(await pollTask(deps, "tasks/get", ctx.owner, taskId, incoming));
    },
    (error) => legacyFailure(error, deps.onError),
  );
}
