// Both eras in Express, next to the SDK's Express helpers: `npx tsx examples/express.ts`.
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { TaskRunner, TaskService } from "@mcp-tasks/core";
import { createTasksEndpoint } from "@mcp-tasks/http";
import { tasksExpressErrorHandler, tasksExpressHandler } from "@mcp-tasks/http/express";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { createMcpExpressApp, requireBearerAuth } from "@modelcontextprotocol/express";
import { slowReport, tokenVerifier } from "./report-tool.js";

export async function startExpressExample({ port = 3000, workMs = 1_000 } = {}) {
  const store = new MemoryTaskStore({});
  const service = new TaskService({ store });
  const tools = [slowReport(workMs)];
  const runner = new TaskRunner({ service, tools });
  // The owner is the default: `req.auth` (set by `requireBearerAuth`) → its `clientId`.
  const endpoint = createTasksEndpoint({ service, runner, tools, requireOwner: true });

  // Host/Origin checks and `express.json()` come with `createMcpExpressApp`; the endpoint
  // takes the parsed `req.body`.
  const app = createMcpExpressApp({ host: "127.0.0.1", jsonLimit: "1mb" });
  app.all("/mcp", requireBearerAuth({ verifier: tokenVerifier }), tasksExpressHandler(endpoint));
  // `express.json()`'s refusals (too large, bad JSON) with the endpoint's answers.
  app.use(tasksExpressErrorHandler());

  const server = app.listen(port, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", resolve));
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    async close() {
      await endpoint.closeSessions();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await endpoint.close();
      await runner.shutdown({ drainMs: 0 });
      await store.close();
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { url } = await startExpressExample();
  console.log(`both eras on ${url} (tokens: alice-token, bob-token)`);
}
