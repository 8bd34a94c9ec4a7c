import {
  linkSpanToTask,
  type RpcOutcome,
  requestTraceContext,
  setSpanError,
  startPollSpan,
  toOutcome,
} from "@mcp-tasks/core";
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
      const incoming = requestTraceContext(params, ctx.traceContext);
      const span = startPollSpan(deps.tracer, "tasks/get", incoming);
      try {
        const { taskId } = parseParams(TaskIdParamsSchema, params, "tasks/get");
        const task = await deps.service.get(ctx.owner, taskId);
        linkSpanToTask(span, task);
        return toLegacyTask(task);
      } catch (error) {
        setSpanError(span, error);
        throw error;
      } finally {
        span.end();
      }
    },
    (error) => legacyFailure(error, deps.onError),
  );
}
