// Drives the extension README's server (started separately, URL in argv[2]) with the
// official 2026-07-28 clients: @modelcontextprotocol/client negotiates the modern era and
// @modelcontextprotocol/ext-tasks runs `slow_add` as a task to its result. Prints the outcome.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";

const url = process.argv[2];
let nextId = 1;

/** The host side of ext-tasks' 2026-07-28 path: one JSON-RPC POST with the 2026 headers. */
async function rawDispatch(request, options) {
  const { method, params } = request;
  const id = nextId++;
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
    ...options?.context?.headers,
  };
  if (method === "tools/call" && typeof params?.name === "string")
    headers["mcp-name"] = params.name;
  const response = await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
    ...(options?.signal && { signal: options.signal }),
  });
  const text = await response.text();
  const messages = (response.headers.get("content-type") ?? "").includes("text/event-stream")
    ? text
        .split(/\r?\n/)
        .filter((line) => line.startsWith("data:"))
        .map((line) => JSON.parse(line.slice(5).trim()))
    : [JSON.parse(text)];
  const message = messages.find((m) => m.id === id);
  if (message?.error) return { kind: "error", error: message.error };
  return { kind: "result", result: message?.result };
}

const clientInfo = { name: "packed-extension-client", version: "1.0.0" };
const client = new Client(clientInfo, { capabilities: {}, versionNegotiation: { mode: "auto" } });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const session = createTaskSessionFromClient(client, {
  endpointId: "packed-extension",
  rawDispatch,
  v2RequestFraming: { protocolVersion: "2026-07-28", clientInfo, clientCapabilities: {} },
});
try {
  const execution = await session.callTool("slow_add", { a: 2, b: 3 });
  const { outcome } = await execution.settle();
  console.log(
    JSON.stringify({ era: client.getProtocolEra(), kind: execution.kind, outcome }, null, 0),
  );
} finally {
  await session.close();
  await client.close();
}
