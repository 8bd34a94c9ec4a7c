// Drives the root README's "Add tasks to an existing server" program (started separately, URL
// in argv[2]) with both official clients: the 2026-07-28 client (@modelcontextprotocol/client
// and ext-tasks through `createRawDispatch`) and the @modelcontextprotocol/sdk 1.x client
// (2025-11-25, `callToolStream`). Each lists the tools, calls the existing tool `add` with
// good and bad arguments, and runs `slow_report` as a task. Prints what each client saw.
import { createRawDispatch } from "@mcp-tasks/extension/client";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const url = process.argv[2];

async function modern() {
  const clientInfo = { name: "packed-modern", version: "1.0.0" };
  const client = new Client(clientInfo, {
    capabilities: {},
    versionNegotiation: { mode: "auto" },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const session = createTaskSessionFromClient(client, {
    endpointId: "packed-existing-server",
    rawDispatch: createRawDispatch({ url }),
    v2RequestFraming: { protocolVersion: "2026-07-28", clientInfo, clientCapabilities: {} },
  });
  try {
    const tools = (await client.listTools()).tools;
    const add = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
    const bad = await client.callTool({ name: "add", arguments: { a: "x", b: 3 } });
    const execution = await session.callTool("slow_report", { topic: "tides" });
    const { outcome } = await execution.settle();
    return { tools, add, bad, kind: execution.kind, outcome };
  } finally {
    await session.close();
    await client.close();
  }
}

async function legacy() {
  const client = new LegacyClient({ name: "packed-legacy", version: "1.0.0" });
  await client.connect(new LegacyTransport(new URL(url)));
  try {
    const tools = (await client.listTools()).tools;
    const add = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
    const bad = await client.callTool({ name: "add", arguments: { a: "x", b: 3 } });
    const messages = [];
    for await (const message of client.experimental.tasks.callToolStream(
      { name: "slow_report", arguments: { topic: "tides" } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    )) {
      messages.push(message);
    }
    const last = messages.at(-1);
    return {
      capabilities: client.getServerCapabilities()?.tasks,
      tools,
      add,
      bad,
      types: messages.map((m) => m.type),
      result: last?.type === "result" ? last.result : last,
    };
  } finally {
    await client.close();
  }
}

console.log(JSON.stringify({ modern: await modern(), legacy: await legacy() }));
