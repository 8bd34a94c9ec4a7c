// Drives the legacy README's server (started separately, URL in argv[2]) with the
// @modelcontextprotocol/sdk 1.x client, as alice (`x-user`): `deploy` runs as a 2025-11-25
// task, asks for confirmation by elicitation, is answered, and completes. Prints what the
// client saw.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const client = new Client(
  { name: "packed-legacy-client", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } } },
);
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  asked.push(request.params.message);
  return { action: "accept", content: { ok: true } };
});
await client.connect(
  new StreamableHTTPClientTransport(new URL(process.argv[2]), {
    requestInit: { headers: { "x-user": "alice" } },
  }),
);
try {
  const messages = [];
  for await (const message of client.experimental.tasks.callToolStream(
    { name: "deploy", arguments: { service: "api" } },
    CallToolResultSchema,
    { task: { ttl: 60_000 } },
  )) {
    messages.push(message);
  }
  const created = messages.find((m) => m.type === "taskCreated");
  const last = messages.at(-1);
  const task = created && (await client.experimental.tasks.getTask(created.task.taskId));
  console.log(
    JSON.stringify({
      capabilities: client.getServerCapabilities()?.tasks,
      types: messages.map((m) => m.type),
      asked,
      status: task?.status,
      result: last?.type === "result" ? last.result.content : last,
    }),
  );
} finally {
  await client.close();
}
