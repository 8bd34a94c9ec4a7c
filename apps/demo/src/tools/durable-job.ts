import type { ToolDefinition } from "@mcp-tasks/core";
import { secondsOf, secondsProperty } from "./seconds.js";
import { sleep } from "./sleep.js";
import { textResult } from "./text.js";

/**
 * `durable_job {seconds}`: works for `seconds` in one-second steps, saying which step it is
 * on, and answers with the worker and attempt that finished it ("done by <holder> on
 * attempt 2"). Safe to re-run from the start, so it opts into retries: when its worker is
 * lost (killed, stalled past its lease) another node runs it again, up to 3 runs.
 */
export const durableJob: ToolDefinition = {
  name: "durable_job",
  title: "Durable job",
  description:
    "Works for the given number of seconds; re-run on another node if its node dies (up to 3 runs). Reports the node and attempt that finished it.",
  inputSchema: {
    type: "object",
    properties: {
      seconds: secondsProperty,
    },
  },
  taskMode: "optional",
  execution: { retry: { attempts: 3, backoffMs: 0 } },
  async run(args, ctx) {
    const seconds = secondsOf(args);
    const steps = Math.ceil(seconds);
    for (let step = 1; step <= steps; step++) {
      await ctx.setStatusMessage(`Attempt ${ctx.attempt}: step ${step} of ${steps}`);
      ctx.reportProgress(step - 1, steps);
      await sleep((seconds / steps) * 1000, ctx.signal);
    }
    return textResult(`done by ${ctx.worker} on attempt ${ctx.attempt}`);
  },
};
