import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { TaskService } from "@mcp-tasks/core";
import { createPostgresTaskStore } from "@mcp-tasks/store-drizzle";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { SdkTaskStore, sdkTaskOptions } from "../src/sdk-task-store.js";

const store = await createPostgresTaskStore({
  url: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
  schema: process.env.TASKS_SCHEMA ?? "public",
  migrate: true,
});
const service = new TaskService({ store, requireOwner: true });
// One per process, shared by every session: it renews the leases of the tasks running here.
const tasks = sdkTaskOptions({ service }); // was: taskStore: new InMemoryTaskStore(), …

function buildServer(): McpServer {
  const server = new McpServer(
    { name: "reports", version: "1.0.0" },
    {
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      ...tasks,
    },
  );
  server.experimental.tasks.registerToolTask(
    "slow_report",
    {
      inputSchema: { topic: z.string(), seconds: z.number().min(0).max(600) },
      execution: { taskSupport: "required" },
    },
    {
      async createTask({ topic, seconds }, extra) {
        const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? null });
        setTimeout(() => {
          void extra.taskStore.storeTaskResult(task.taskId, "completed", {
            content: [{ type: "text", text: `Report on ${topic}` }],
          });
        }, seconds * 1000);
        return { task };
      },
      getTask: (_args, extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: (_args, extra) => extra.taskStore.getTaskResult(extra.taskId) as never,
    },
  );
  return server;
}

// Your token check goes here (`requireBearerAuth` sets `req.auth` the same way).
const clients = new Map([
  ["alice-token", "alice"],
  ["bob-token", "bob"],
]);
function authenticate(req: IncomingMessage): AuthInfo | undefined {
  const token = req.headers.authorization?.replace(/^Bearer /, "") ?? "";
  const clientId = clients.get(token);
  return clientId === undefined ? undefined : { token, clientId, scopes: [] };
}

const sessions = new Map<string, StreamableHTTPServerTransport>();
const http = createServer(async (req, res) => {
  const auth = authenticate(req);
  if (auth === undefined) return void res.writeHead(401).end();
  const sessionId = req.headers["mcp-session-id"];
  let transport = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
  if (transport === undefined) {
    if (sessionId !== undefined) return void res.writeHead(404).end();
    const created = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => void sessions.set(id, created),
    });
    created.onclose = () => void sessions.delete(created.sessionId ?? "");
    await buildServer().connect(created);
    SdkTaskStore.bindTransport(created); // tasks belong to req.auth's client, not the session
    transport = created;
  }
  await transport.handleRequest(Object.assign(req, { auth }), res);
});
http.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
});
