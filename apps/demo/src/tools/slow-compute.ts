import type { ToolDefinition } from "@mcp-tasks/core";
import { secondsOf, secondsProperty } from "./seconds.js";
import { sleep } from "./sleep.js";
import { textResult } from "./text.js";

/**
 * `slow_compute {seconds, label}`: task-supporting; sleeps `seconds` (0 = instant) and
 * settles `cancelled` when cancelled while running.
 */
export const slowCompute: ToolDefinition = {
  name: "slow_compute",
  title: "Slow compute",
  description: "Sleeps for the given number of seconds, then reports. Runs as a task when it can.",
  inputSchema: {
    type: "object",
    properties: {
      seconds: secondsProperty,
      label: { type: "string", description: "A label echoed in the result" },
    },
  },
  taskMode: "optional",
  async run(args, ctx) {
    const seconds = secondsOf(args);
    const label = typeof args.label === "string" ? args.label : "job";
    if (seconds > 0) {
      await ctx.setStatusMessage(`Computing ${label} for ${seconds}s`);
      await sleep(seconds * 1000, ctx.signal);
    }
    return textResult(`Computed ${label} in ${seconds}s`);
  },
};
