import type { ToolDefinition } from "@mcp-tasks/core";
import { sleep } from "./sleep.js";

/** An error carrying a JSON-RPC code, which the runner inlines as the task's `error`. */
class JobCrashed extends Error {
  readonly code = -32603;
  readonly data = { reason: "worker_crashed" };
}

/** `protocol_error_job {}`: task-supporting; fails with a JSON-RPC error (not a tool error). */
export const protocolErrorJob: ToolDefinition = {
  name: "protocol_error_job",
  title: "Protocol error job",
  description: "Crashes with a JSON-RPC error, so its task ends failed.",
  inputSchema: { type: "object", properties: {} },
  taskMode: "optional",
  async run(_args, ctx) {
    await sleep(200, ctx.signal);
    throw new JobCrashed("Internal error: the job's worker crashed");
  },
};
