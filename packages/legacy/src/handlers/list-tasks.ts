import { type RpcOutcome, toOutcome } from "@mcp-tasks/core";
import { legacyFailure } from "../errors.js";
import { toLegacyTask } from "../projection.js";
import { ListTasksParamsSchema, type ListTasksResult } from "../wire.js";
import { type LegacyDeps, type LegacyRequestContext, parseParams } from "./deps.js";

/** `tasks/list`: the caller's tasks, oldest first, with an opaque cursor. */
export function listTasks(
  deps: LegacyDeps,
  ctx: LegacyRequestContext,
  params: unknown,
): Promise<RpcOutcome<ListTasksResult>> {
  return toOutcome(
    async () => {
      const parsed = parseParams(ListTasksParamsSchema, params, "tasks/list");
      const page = await deps.service.list(
        ctx.owner,
        parsed?.cursor !== undefined ? { cursor: parsed.cursor } : {},
      );
      return {
        tasks: page.tasks.map(toLegacyTask),
        ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }),
      };
    },
    (error) => legacyFailure(error, deps.onError),
  );
}
