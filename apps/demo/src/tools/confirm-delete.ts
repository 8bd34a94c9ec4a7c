import type { ToolDefinition } from "@mcp-tasks/core";
import { acceptedContent, elicitForm, textResult } from "./text.js";

/** `confirm_delete {filename}`: task-supporting; parks for one confirmation. */
export const confirmDelete: ToolDefinition = {
  name: "confirm_delete",
  title: "Confirm delete",
  description: "Asks for confirmation before (pretend-)deleting a file.",
  inputSchema: {
    type: "object",
    properties: { filename: { type: "string", description: "The file to delete" } },
    required: ["filename"],
  },
  taskMode: "optional",
  async run(args, ctx) {
    const filename = String(args.filename);
    const { confirm } = await ctx.requireInput(
      {
        confirm: elicitForm(
          `Delete ${filename}?`,
          { confirm: { type: "boolean", description: "Yes, delete it" } },
          ["confirm"],
        ),
      },
      `Waiting for confirmation to delete ${filename}`,
    );
    const content = acceptedContent(confirm);
    return content?.confirm === true
      ? textResult(`Deleted ${filename}`)
      : textResult(`Kept ${filename}: deletion was not confirmed`);
  },
};
