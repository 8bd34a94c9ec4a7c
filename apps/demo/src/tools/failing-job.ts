import type { ToolDefinition } from "@mcp-tasks/core";
import { sleep } from "./sleep.js";
import { textResult } from "./text.js";

/** `failing_job {}`: task only; after about a second returns a tool error (`isError`). */
export const failingJob: ToolDefinition = {
  name: "failing_job",
  title: "Failing job",
  description: "Always ends with a tool execution error. Only runs as a task.",
  inputSchema: { type: "object", properties: {} },
  taskMode: "always",
  async run(_args, ctx) {
    await sleep(1000, ctx.signal);
    return textResult("The job failed: the input data set is empty", true);
  },
};
