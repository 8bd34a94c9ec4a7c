import type { z } from "zod";
import { declaresTasksExtension } from "../capabilities.js";
import { headerMismatch, invalidParams, missingTasksExtension } from "../errors.js";
import type { TasksRequestContext } from "../request.js";

/**
 * The checks every `tasks/*` request passes, in this order: the extension is declared on
 * this request (`-32021`), the params parse (`-32602`), and the `Mcp-Name` routing header,
 * when present, names `params.taskId` (`-32020`). Throws the `RpcError`; returns the params.
 */
export function guardTaskRequest<S extends z.ZodType<{ taskId: string }>>(
  method: string,
  ctx: TasksRequestContext,
  schema: S,
  params: unknown,
): z.infer<S> {
  if (!declaresTasksExtension(ctx.clientCapabilities)) {
    throw missingTasksExtension(`${method} requires the io.modelcontextprotocol/tasks extension`);
  }
  const parsed = schema.safeParse(params ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalidParams(
      issue ? `${issue.path.join(".") || "params"}: ${issue.message}` : "malformed params",
    );
  }
  const data = parsed.data as z.infer<S>;
  if (ctx.routingName !== undefined && ctx.routingName !== data.taskId) {
    throw headerMismatch(ctx.routingName, data.taskId);
  }
  return data;
}
