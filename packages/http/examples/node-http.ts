// Both eras on node:http: `npx tsx examples/node-http.ts`, then http://127.0.0.1:3000/mcp.
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { TaskRunner, TaskService } from "@mcp-tasks/core";
import { createTasksEndpoint, createTasksHttpServer } from "@mcp-tasks/http";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { ownerOfBearer, slowReport } from "./report-tool.js";

export async function startNodeHttpExample({ port = 3000, workMs = 1_000 } = {}) {
  const store = new MemoryTaskStore({});
  const service = new TaskService({ store });
  const tools = [slowReport(workMs)];
  const runner = new TaskRunner({ service, tools });
  const endpoint = createTasksEndpoint({
    service,
    runner,
    tools,
    serverInfo: { name: "report-server", version: "1.0.0" },
    // The owner from the request itself (here a static bearer token); a refusal is answered
    // as it says, in both eras.
    owner: (request) =>
      ownerOfBearer(request.headers.get("authorization")) ?? {
        kind: "reject",
        status: 401,
        message: "Unknown or missing bearer token",
      },
  });
  // Bounded header and request timeouts: a client trickling its body cannot hold a socket.
  const server = createTasksHttpServer(endpoint.listener);
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
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
  const { url } = await startNodeHttpExample();
  console.log(`both eras on ${url} (tokens: alice-token, bob-token)`);
}
