// The legacy README's drop-in for @modelcontextprotocol/sdk 1.x servers, from the installed
// tarballs with the SDK installed as the peer: an SDK 1.x `McpServer` whose only change from
// the SDK's own task examples is `...sdkTaskOptions({ service })` in its options (and the
// README's `SdkTaskStore.bindTransport(transport)` after connecting), served on 127.0.0.1
// on a free port, and an SDK 1.x client running a tool as a task to its result. Prints what
// the client saw.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { TaskService } from "@mcp-tasks/core";
import { SdkTaskStore, sdkTaskOptions } from "@mcp-tasks/legacy/sdk-task-store";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const service = new TaskService({ store: new MemoryTaskStore(), pollIntervalMs: 50 });

function buildServer() {
  const server = new McpServer(
    { name: "sdk1-drop-in", version: "1.0.0" },
    {
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      ...sdkTaskOptions({ service }), // was: taskStore: new InMemoryTaskStore(), ...
    },
  );
  server.experimental.tasks.registerToolTask(
    "slow_echo",
    { inputSchema: { text: z.string() }, execution: { taskSupport: "required" } },
    {
      async createTask({ text }, extra) {
        const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? null });
        setTimeout(() => {
          void extra.taskStore.storeTaskResult(task.taskId, "completed", {
            content: [{ type: "text", text: `echo: ${text}` }],
          });
        }, 100);
        return { task };
      },
      getTask: (_args, extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: (_args, extra) => extra.taskStore.getTaskResult(extra.taskId),
    },
  );
  return server;
}

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

const transports = new Map();
const http = createServer(async (req, res) => {
  const body = req.method === "POST" ? await readBody(req) : undefined;
  const sessionId = req.headers["mcp-session-id"];
  let transport = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
  if (transport === undefined) {
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => transports.set(id, transport),
    });
    await buildServer().connect(transport);
    SdkTaskStore.bindTransport(transport);
  }
  await transport.handleRequest(req, res, body);
});
await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
const url = new URL(`http://127.0.0.1:${http.address().port}/mcp`);

const client = new Client({ name: "packed-sdk1-client", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(url));
try {
  const messages = [];
  for await (const message of client.experimental.tasks.callToolStream(
    { name: "slow_echo", arguments: { text: "hi" } },
    CallToolResultSchema,
    { task: { ttl: 60_000 } },
  )) {
    messages.push(message);
  }
  const created = messages.find((m) => m.type === "taskCreated");
  const last = messages.at(-1);
  const { tasks } = await client.experimental.tasks.listTasks();
  console.log(
    JSON.stringify({
      types: messages.map((m) => m.type),
      ttl: created?.task.ttl,
      result: last?.type === "result" ? last.result.content : last,
      listed: tasks.map((t) => [t.taskId === created?.task.taskId, t.status]),
    }),
  );
} finally {
  await client.close();
  for (const transport of transports.values()) await transport.close();
  http.closeAllConnections();
  http.close();
}
