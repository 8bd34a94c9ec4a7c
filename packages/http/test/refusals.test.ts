// One fault, one answer: every refusal of the edge is the same in both eras, on node:http and
// on fetch, and equals the SDK's; bodies are bounded in size and time, streams are not.
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { owner, TaskRunner, TaskService, type ToolDefinition } from "@mcp-tasks/core";
import { createNodeTasksHandler } from "@mcp-tasks/extension";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { slowReport } from "../examples/report-tool.js";
import { createTasksEndpoint, createTasksHttpServer, type TasksEndpoint } from "../src/index.js";

const LIMIT = 2048;
/** Longest the server may take to answer a refusal: a hang guard, not a timing. */
const ANSWER_WITHIN_MS = 3_000;

const store = new MemoryTaskStore({ sweepIntervalMs: 0 });
const service = new TaskService({ store, pollIntervalMs: 50 });
/** `hold`: runs until cancelled (at most 10 s), so a listen on it stays open. */
const hold: ToolDefinition = {
  name: "hold",
  inputSchema: { type: "object" },
  taskMode: "always",
  async run(_args, ctx) {
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, 10_000);
      ctx.signal.addEventListener("abort", () => resolve(clearTimeout(timer)), { once: true });
    });
    return { content: [{ type: "text", text: "held" }] };
  },
};
const tools = [slowReport(50), hold];
const runner = new TaskRunner({ service, tools });
const servers: Server[] = [];
let endpoint: TasksEndpoint;
let nodeUrl: string;
let fetchUrl: string;

async function serve(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

beforeAll(async () => {
  endpoint = createTasksEndpoint({
    service,
    runner,
    tools,
    maxBodyBytes: LIMIT,
    bodyTimeoutMs: 300,
    keepAliveMs: 100,
    // Anonymous callers are let in on purpose (an owner hook alone would refuse them).
    requireOwner: false,
    owner: (request) => {
      const auth = request.headers.get("authorization");
      if (auth === "Bearer forbidden") return { kind: "reject", status: 403, message: "Not you" };
      if (auth !== null && auth !== "Bearer alice") {
        return { kind: "reject", status: 401, message: "Unknown token" };
      }
      return auth === null ? { kind: "anonymous" } : owner({ principalId: "alice" });
    },
  });
  nodeUrl = await serve(
    createTasksHttpServer(endpoint.listener, {
      requestTimeoutMs: 250,
      connectionsCheckingIntervalMs: 50,
    }),
  );
  const node = toNodeHandler({ fetch: (request) => endpoint.fetch(request) });
  fetchUrl = await serve(
    createTasksHttpServer((req, res) => void node(req as Parameters<typeof node>[0], res)),
  );
});
afterAll(async () => {
  await endpoint.close();
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await runner.shutdown({ drainMs: 0 });
  await store.close();
});

const MODERN = {
  "mcp-protocol-version": "2026-07-28",
  "mcp-method": "server/discover",
};
const DISCOVER = {
  jsonrpc: "2.0",
  id: 1,
  method: "server/discover",
  params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } },
};
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "t", version: "1" },
  },
};

interface Fault {
  readonly name: string;
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly method?: string;
  /** Replaces the body (the era's message otherwise). */
  readonly body?: string;
  readonly pad?: boolean;
}

const FAULTS: Fault[] = [
  { name: "a body past the limit", status: 413, pad: true },
  {
    name: "a body that is not JSON by type",
    status: 415,
    headers: { "content-type": "text/plain" },
  },
  { name: "a foreign Origin", status: 403, headers: { origin: "http://evil.example" } },
  { name: "an unknown token", status: 401, headers: { authorization: "Bearer nope" } },
  { name: "a refused caller", status: 403, headers: { authorization: "Bearer forbidden" } },
  { name: "an unsupported method", status: 405, method: "PUT" },
];

async function send(url: string, fault: Fault, era: "modern" | "legacy") {
  const message = era === "modern" ? DISCOVER : INITIALIZE;
  const body = fault.pad ? { ...message, pad: "x".repeat(LIMIT) } : message;
  const response = await fetch(url, {
    method: fault.method ?? "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(era === "modern" ? MODERN : {}),
      ...fault.headers,
    },
    body: fault.body ?? JSON.stringify(body),
    signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
  });
  return {
    status: response.status,
    body: await response.json(),
    challenge: response.headers.get("www-authenticate"),
    allow: response.headers.get("allow"),
  };
}

describe("one refusal table", () => {
  it.each(FAULTS)(
    "$name: the same answer in both eras, on node:http and on fetch",
    async (fault) => {
      const answers = [
        await send(nodeUrl, fault, "modern"),
        await send(nodeUrl, fault, "legacy"),
        await send(fetchUrl, fault, "modern"),
        await send(fetchUrl, fault, "legacy"),
      ];
      expect(answers[0]?.status).toBe(fault.status);
      expect(answers[0]?.body).toMatchObject({ jsonrpc: "2.0", id: null, error: {} });
      for (const answer of answers.slice(1)) expect(answer).toEqual(answers[0]);
    },
  );

  it("answers a body past the limit exactly as the SDK and the extension's own handler do", async () => {
    const ours = await send(nodeUrl, FAULTS[0] as Fault, "modern");
    // The SDK's createMcpHandler, and createNodeTasksHandler standing alone, with the same limit.
    const sdk = createMcpHandler(() => new McpServer({ name: "x", version: "1" }), {
      maxRequestBodySize: LIMIT,
    });
    const sdkUrl = await serve(
      createTasksHttpServer((req, res) => {
        const node = toNodeHandler(sdk);
        void node(req as Parameters<typeof node>[0], res);
      }),
    );
    const standalone = createNodeTasksHandler(endpoint.extension, { maxBodyBytes: LIMIT });
    const standaloneUrl = await serve(
      createTasksHttpServer((req, res) => void standalone.handle(req, res)),
    );
    for (const url of [sdkUrl, standaloneUrl]) {
      const theirs = await send(url, FAULTS[0] as Fault, "modern");
      expect(theirs.status).toBe(ours.status);
      expect(theirs.body).toEqual(ours.body);
    }
    await sdk.close();
    await standalone.close();
  });

  it("answers 401 with the challenge and 405 with Allow", async () => {
    const unauthorized = await send(nodeUrl, FAULTS[3] as Fault, "legacy");
    expect(unauthorized.challenge).toBe("Bearer");
    const put = await send(fetchUrl, FAULTS[5] as Fault, "modern");
    expect(put.allow).toBe("GET, POST, DELETE");
  });

  it("refuses a foreign Host (DNS rebinding) with 403, and a malformed one with 400", async () => {
    for (const [host, status] of [
      ["evil.example", 403],
      ["a b", 400],
    ] as const) {
      const answer = await rawExchange(nodeUrl, request(host, JSON.stringify(INITIALIZE)));
      expect(answer.status, host).toBe(status);
    }
  });
});

function request(host: string, body: string, length = Buffer.byteLength(body)): string {
  return (
    `POST /mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
    `Accept: application/json, text/event-stream\r\nContent-Length: ${length}\r\n\r\n${body}`
  );
}

/** Sends raw bytes, then (optionally) more bytes one at a time; reads until the server closes. */
function rawExchange(
  url: string,
  text: string,
  trickle?: { readonly everyMs: number; readonly bytes: number },
): Promise<{ status: number; head: string; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let data = "";
    let sent = 0;
    const ticker =
      trickle &&
      setInterval(() => {
        if (sent++ < trickle.bytes && socket.writable) socket.write("x");
      }, trickle.everyMs);
    const guard = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${ANSWER_WITHIN_MS} ms:\n${data}`));
    }, ANSWER_WITHIN_MS);
    socket.on("data", (chunk) => {
      data += chunk.toString("latin1");
      if (!trickle && data.includes("\r\n\r\n") && /content-length: (\d+)/i.test(data)) {
        const length = Number(/content-length: (\d+)/i.exec(data)?.[1]);
        if (Buffer.byteLength(data.slice(data.indexOf("\r\n\r\n") + 4)) >= length) socket.end();
      }
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(guard);
      if (ticker) clearInterval(ticker);
      const cut = data.indexOf("\r\n\r\n");
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0),
        head: cut < 0 ? data : data.slice(0, cut),
        body: cut < 0 ? "" : data.slice(cut + 4),
      });
    });
    socket.write(text);
  });
}

describe("timeouts", () => {
  it("answers 408 and closes the connection when a body trickles in past bodyTimeoutMs", async () => {
    const { port } = new URL(nodeUrl);
    // 200 bytes announced, one sent every 100 ms: the 300 ms body timeout ends it.
    const answer = await rawExchange(nodeUrl, request(`127.0.0.1:${port}`, "{", 200), {
      everyMs: 100,
      bytes: 199,
    });
    expect(answer.status).toBe(408);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: -32000 } });
    expect(answer.head).toMatch(/\r\nConnection: close/i);
  });

  it("keeps a 2026-07-28 task listen stream open past the server's request timeout", async () => {
    // A task that keeps running, so its listen stream stays open (keepalive 100 ms).
    const task = await service.create(owner({ principalId: "alice" }), {
      era: "2026-07-28",
      request: { toolName: "hold", arguments: {} },
    });
    const response = await fetch(nodeUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: "Bearer alice",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "subscriptions/listen",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 5,
        method: "subscriptions/listen",
        params: {
          notifications: { taskIds: [task.taskId] },
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {
              extensions: { "io.modelcontextprotocol/tasks": {} },
            },
          },
        },
      }),
      signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
    });
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const opened = Date.now();
    // Read past the 250 ms request timeout (checked every 50 ms): frames keep coming.
    let frames = 0;
    let lateFrames = 0;
    for (let i = 0; i < 50 && Date.now() - opened < 1_000; i++) {
      const { done } = await reader.read();
      if (done) break;
      frames++;
      if (Date.now() - opened > 600) lateFrames++;
    }
    await reader.cancel();
    await service.requestCancel(owner({ principalId: "alice" }), task.taskId);
    expect(frames).toBeGreaterThan(1);
    expect(lateFrames).toBeGreaterThan(0);
  });
});
