// Both eras as one web-standard `fetch(Request): Response` handler: `npx tsx examples/fetch.ts`.
// The same `handler` runs as it is on Deno (`Deno.serve(handler)`), Bun (`Bun.serve({ fetch:
// handler })`) or a worker; on Node it is mounted with `toNodeHandler`.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { TaskRunner, TaskService } from "@mcp-tasks/core";
import { createTasksEndpoint } from "@mcp-tasks/http";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { requireBearerAuth } from "@modelcontextprotocol/server";
import { slowReport, tokenVerifier } from "./report-tool.js";

export async function startFetchExample({ port = 3000, workMs = 1_000 } = {}) {
  const store = new MemoryTaskStore({});
  const service = new TaskService({ store });
  const tools = [slowReport(workMs)];
  const runner = new TaskRunner({ service, tools });
  const endpoint = createTasksEndpoint({ service, runner, tools, requireOwner: true });

  const authenticate = requireBearerAuth({ verifier: tokenVerifier });
  const handler = async (request: Request): Promise<Response> => {
    const authInfo = await authenticate(request);
    if (authInfo instanceof Response) return authInfo; // 401 with its WWW-Authenticate
    return endpoint.fetch(request, { authInfo });
  };

  const node = toNodeHandler({ fetch: handler });
  const server = createServer((req, res) => void node(req as Parameters<typeof node>[0], res));
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
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
  const { url } = await startFetchExample();
  console.log(`both eras on ${url} (tokens: alice-token, bob-token)`);
}
