import type { ToolDefinition } from "@mcp-tasks/core";
import { textResult } from "./text.js";

/** `greet {name}`: synchronous only; answers `Hello, {name}!`. */
export const greet: ToolDefinition = {
  name: "greet",
  title: "Greet",
  description: "Says hello. Always answered synchronously.",
  inputSchema: {
    type: "object",
    properties: { name: { type: "string", description: "Who to greet" } },
    required: ["name"],
  },
  taskMode: "never",
  run: (args) => textResult(`Hello, ${String(args.name)}!`),
};
