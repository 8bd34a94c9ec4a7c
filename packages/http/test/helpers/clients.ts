// Real clients of both eras, over real HTTP: the official two-era client (@modelcontextprotocol/
// client + ext-tasks) on its 2026-07-28 path, and the SDK 1.x client's tasks API (2025-11-25).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  createTaskSessionFromClient,
  type RawClientDispatch,
  type TaskEnabledSession,
} from "@modelcontextprotocol/ext-tasks/client";
import { Client as Sdk1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as Sdk1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

let nextId = 1;

/** Reads a JSON or SSE answer; for SSE, the message answering `id`. */
export async function readAnswer(
  response: Response,
  id?: unknown,
): Promise<{ status: number; body: Record<string, unknown> | undefined; headers: Headers }> {
  const type = response.headers.get("content-type") ?? "";
  const text = await response.text();
  let body: Record<string, unknown> | undefined;
  if (type.includes("text/event-stream")) {
    body = text
      .split(/\r?\n/)
      .filter((line) => line.startsWith("data:"))
      .map((line) => JSON.parse(line.slice(5).trim()) as Record<string, unknown>)
      .find((event) => event.id === id);
  } else {
    try {
      body = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
    } catch {
      body = undefined;
    }
  }
  return { status: response.status, body, headers: response.headers };
}

/** The host side of ext-tasks' 2026-07-28 path, with a bearer token. */
function rawDispatch(url: string, token: string): RawClientDispatch {
  return async (request, options) => {
    const { method, params } = request as { method: string; params?: Record<string, unknown> };
    const id = nextId++;
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        authorization: `Bearer ${token}`,
        ...(method === "tools/call" &&
          typeof params?.name === "string" && { "mcp-name": params.name }),
        ...options?.context?.headers,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
      ...(options?.signal && { signal: options.signal }),
    });
    const message = (await readAnswer(response, id)).body;
    if (message?.error) return { kind: "error", error: message.error } as never;
    return { kind: "result", result: message?.result } as never;
  };
}

/** A 2026-07-28 client with its ext-tasks session. */
export async function modernClient(
  url: string,
  token: string,
): Promise<{ client: Client; session: TaskEnabledSession; close(): Promise<void> }> {
  const clientInfo = { name: "http-edge-test", version: "1.0.0" };
  const client = new Client(clientInfo, { versionNegotiation: { mode: "auto" } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  const session = createTaskSessionFromClient(client, {
    endpointId: `http-edge-${token}`,
    rawDispatch: rawDispatch(url, token),
    v2RequestFraming: { protocolVersion: "2026-07-28", clientInfo, clientCapabilities: {} },
  });
  return {
    client,
    session,
    async close() {
      await session.close();
      await client.close();
    },
  };
}

/** An SDK 1.x client (2025-11-25 session). */
export async function sdk1Client(url: string, token: string): Promise<Sdk1Client> {
  const client = new Sdk1Client({ name: "http-edge-sdk1", version: "1.0.0" });
  await client.connect(
    new Sdk1Transport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

/** Runs `slow_report` as a task with the SDK 1.x client's `callToolStream`; the messages' types and the result text. */
export async function sdk1Report(client: Sdk1Client, topic: string) {
  const types: string[] = [];
  let text: string | undefined;
  for await (const message of client.experimental.tasks.callToolStream(
    { name: "slow_report", arguments: { topic } },
    CallToolResultSchema,
    { task: { ttl: 60_000 } },
  )) {
    types.push(message.type);
    if (message.type === "result") {
      const first = message.result.content[0];
      text = first?.type === "text" ? first.text : undefined;
    }
  }
  return { types, text };
}
