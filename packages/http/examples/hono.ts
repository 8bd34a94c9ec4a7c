// Both eras in Hono on @hono/node-server: `npx tsx examples/hono.ts`.
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { serve } from "@hono/node-server";
import { TaskRunner, TaskService } from "@mcp-tasks/core";
import { createTasksEndpoint } from "@mcp-tasks/http";
import { tasksHonoHandler } from "@mcp-tasks/http/hono";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { createMcpHonoApp } from "@modelcontextprotocol/hono";
import { requireBearerAuth } from "@modelcontextprotocol/server";
import { slowReport, tokenVerifier } from "./report-tool.js";

export async function startHonoExample({ port = 3000, workMs = 1_000 } = {}) {
  const store = new MemoryTaskStore({});
  const service = new TaskService({ store });
  const tools = [slowReport(workMs)];
  const runner = new TaskRunner({ service, tools });
  const endpoint = createTasksEndpoint({ service, runner, tools, requireOwner: true });

  // Host/Origin checks and the parsed body (`c.get("parsedBody")`) from `createMcpHonoApp`.
  const app = createMcpHonoApp({ host: "127.0.0.1" });
  app.all(
    "/mcp",
    tasksHonoHandler(endpoint, { auth: requireBearerAuth({ verifier: tokenVerifier }) }),
  );

  const server = await new Promise<Server>((resolve) => {
    const started = serve(
      {
        fetch: app.fetch,
        port,
        hostname: "127.0.0.1",
        serverOptions: { headersTimeout: 10_000, requestTimeout: 60_000 },
      },
      () => resolve(started as Server),
    );
  });
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
  const { url } = await startHonoExample();
  console.log(`both eras on ${url} (tokens: alice-token, bob-token)`);
}
