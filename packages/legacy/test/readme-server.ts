import { createServer, type RequestListener } from "node:http";
import { owner, TaskRunner, TaskService, type ToolDefinition } from "@mcp-tasks/core";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { createLegacyHandler } from "../src/index.js";

const service = new TaskService({ store: new MemoryTaskStore(), requireOwner: true });
const runner = new TaskRunner({ service });
const confirmSchema = { type: "object", properties: { ok: { type: "boolean" } } };
const tools: ToolDefinition[] = [
  {
    name: "deploy",
    description: "Deploys a service after the user confirms",
    inputSchema: { type: "object", properties: { service: { type: "string" } } },
    taskMode: "always", // tools/list: execution.taskSupport = "required"
    run: async (args, ctx) => {
      const { confirm } = await ctx.requireInput({
        confirm: {
          method: "elicitation/create",
          params: { message: `Deploy ${args.service}?`, requestedSchema: confirmSchema },
        },
      });
      await ctx.setStatusMessage("deploying");
      return { content: [{ type: "text", text: `done: ${JSON.stringify(confirm)}` }] };
    },
  },
];
const legacy = createLegacyHandler({
  service,
  runner,
  tools,
  serverInfo: { name: "deployer", version: "1.0.0" },
  // Resolved on every HTTP request; bound to the session at initialize.
  ownerOf: (request) => owner({ principalId: request.headers.get("x-user") }),
});
// The cast is only needed under exactOptionalPropertyTypes.
createServer(toNodeHandler(legacy) as RequestListener).listen(3000, "127.0.0.1");
