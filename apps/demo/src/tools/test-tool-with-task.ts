import type { TasksTool } from "@mcp-tasks/extension";
import { sleep } from "./sleep.js";
import { acceptedContent, elicitForm, textResult } from "./text.js";

/**
 * `test_tool_with_task {}`: task only. Round 1 answers an ephemeral `input_required` asking
 * for `user_name`; round 2, carrying the answer, creates a task whose result names the user.
 */
export const testToolWithTask: TasksTool = {
  name: "test_tool_with_task",
  title: "Input, then a task",
  description: "Asks for your name, then greets you from a task.",
  inputSchema: { type: "object", properties: {} },
  taskMode: "always",
  preflight(args, inputResponses) {
    const name = acceptedContent(inputResponses.user_name)?.name;
    if (typeof name === "string" && name.length > 0) {
      return { kind: "proceed", arguments: { ...args, user_name: name } };
    }
    return {
      kind: "input_required",
      inputRequests: {
        user_name: elicitForm("What is your name?", { name: { type: "string" } }, ["name"]),
      },
    };
  },
  async run(args, ctx) {
    await ctx.setStatusMessage("Preparing the greeting");
    await sleep(300, ctx.signal);
    return textResult(`Hello, ${String(args.user_name)}! Your task is done.`);
  },
};
