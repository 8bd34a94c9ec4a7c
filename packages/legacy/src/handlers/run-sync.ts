import { randomUUID } from "node:crypto";
import type { InputResponse, TaskContext, ToolDefinition } from "@mcp-tasks/core";
import { internalError } from "../errors.js";
import { askClient } from "./ask-client.js";
import type { LegacyRequestContext } from "./deps.js";

/**
 * Runs a tool without a task, answering its input requests with side requests on the
 * call's own stream. Resolves with the tool's result; throws what the tool threw.
 */
export async function runSynchronously(
  tool: ToolDefinition,
  args: Readonly<Record<string, unknown>>,
  ctx: LegacyRequestContext,
): Promise<Record<string, unknown>> {
  const signal = ctx.signal ?? new AbortController().signal;
  const context: TaskContext = {
    // A synchronous call has no task; the id only names the run.
    taskId: `sync-${randomUUID()}`,
    owner: ctx.owner,
    signal,
    attempt: 1,
    worker: "",
    async requireInput(requests) {
      const out: Record<string, InputResponse> = {};
      for (const [name, request] of Object.entries(requests)) {
        out[name] = await askClient(request, { ...ctx, signal });
      }
      return out;
    },
    async setStatusMessage() {},
    reportProgress() {},
  };
  const result = await tool.run(args, context);
  if (typeof result !== "object" || result === null || Array.isArray(result)) {
    throw internalError("The tool handler returned no result object");
  }
  return { ...result };
}
