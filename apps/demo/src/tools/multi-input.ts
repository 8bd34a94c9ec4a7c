import type { ToolDefinition } from "@mcp-tasks/core";
import { acceptedContent, elicitForm, textResult } from "./text.js";

/** `multi_input {}`: task-supporting; two elicitations pending at once. */
export const multiInput: ToolDefinition = {
  name: "multi_input",
  title: "Multi input",
  description: "Asks two questions at once and reports both answers.",
  inputSchema: { type: "object", properties: {} },
  taskMode: "optional",
  async run(_args, ctx) {
    const answers = await ctx.requireInput(
      {
        name: elicitForm("What is your name?", { name: { type: "string" } }, ["name"]),
        confirm: elicitForm("Proceed?", { confirm: { type: "boolean" } }, ["confirm"]),
      },
      "Waiting for two answers",
    );
    const name = acceptedContent(answers.name)?.name;
    const confirmed = acceptedContent(answers.confirm)?.confirm;
    return textResult(
      `name=${typeof name === "string" ? name : "(none)"}, confirmed=${confirmed === true}`,
    );
  },
};
