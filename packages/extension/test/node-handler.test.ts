import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Owner } from "@mcp-tasks/core";
import {
  classifyInboundRequest,
  createMcpHandler,
  type McpHttpHandler,
} from "@modelcontextprotocol/server";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createNodeTasksHandler, createTasksServer, type NodeTasksHandler } from "../src/index.js";
import { ALICE, BOB, EXT, type Harness, harness, STORES, startTask } from "./fixtures.js";

const SERVER_INFO = { name: "node-handler-test", version: "1.0.0" };
const WITH_EXT = { extensions: { [EXT]: {} } };

interface Wire {
  status: number;
  contentType: string | null;
  body: unknown;
}

/** One 2026-07-28 request: headers as a client sends them, overridable per case. */
function request(
  method: string,
  params: Record<string, unknown>,
  options: {
    headers?: Record<string, string | undefined>;
    capabilities?: unknown;
    id?: unknown;
  } = {},
) {
  const name = typeof params.taskId === "string" ? params.taskId : undefined;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
    ...(name !== undefined && { "mcp-name": name }),
  };
  for (const [key, value] of Object.entries(options.headers ?? {})) {
    if (value === undefined) delete headers[key];
    else headers[key] = value;
  }
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: options.id ?? 7,
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": options.capabilities ?? WITH_EXT,
        "io.modelcontextprotocol/clientInfo": { name: "node-handler-test", version: "1" },
      },
    },
  });
  return { headers, body };
}

/**
 * POSTs `body` with node:http on a fresh connection (`Connection: close`), in two parts 150 ms
 * apart: the status (or the error), and whether the answer came before the second part.
 */
function postInTwoParts(
  port: number,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number | string; answeredMidBody: boolean }> {
  const half = Math.floor(body.length / 2);
  return new Promise((resolve) => {
    let secondPartSent = false;
    const req = httpRequest({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: "/mcp",
      agent: false,
      headers: { accept: "application/json, text/event-stream", ...headers },
    });
    req.on("error", (error) =>
      resolve({ status: String(error), answeredMidBody: !secondPartSent }),
    );
    req.on("response", (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, answeredMidBody: !secondPartSent });
    });
    req.write(body.slice(0, half));
    setTimeout(() => {
      secondPartSent = true;
      req.end(body.slice(half));
    }, 150);
  });
}

async function read(response: Response): Promise<Wire> {
  const text = await response.text();
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    body: text ? JSON.parse(text) : undefined,
  };
}

describe.each(STORES)("createNodeTasksHandler on the $name store", (factory) => {
  let h: Harness;
  let handler: NodeTasksHandler;
  let sdk: McpHttpHandler;
  let server: Server;
  let url: string;
  let owner: Owner;

  beforeEach(async () => {
    h = await harness(factory);
    owner = ALICE;
    handler = createNodeTasksHandler(h.ext, { serverInfo: SERVER_INFO });
    // The reference: the SDK's own handler serving the same extension.
    sdk = createMcpHandler(() => createTasksServer(h.ext, { owner, serverInfo: SERVER_INFO }), {
      legacy: "reject",
    });
    server = createServer((req, res) => void handler.handle(req, res, { owner }));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  afterEach(async () => {
    await handler.close();
    await sdk.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await h.close();
  });

  /** The same request through the node handler and through the SDK: both answers. */
  async function both(req: { headers: Record<string, string>; body: string }) {
    const lean = await read(await fetch(url, { method: "POST", ...req }));
    const reference = await read(
      await sdk.fetch(new Request(url, { method: "POST", headers: req.headers, body: req.body })),
    );
    return { lean, reference };
  }

  it("answers tasks/get, tasks/update and tasks/cancel exactly as the SDK does", async () => {
    const taskId = await startTask(h, "work", { gate: "hold" });
    const cases = [
      request("tasks/get", { taskId }),
      request("tasks/get", { taskId }, { id: "string-id" }),
      request("tasks/get", { taskId: "unknown" }),
      request("tasks/get", { taskId }, { capabilities: {} }),
      request("tasks/get", { taskId }, { headers: { "mcp-name": "other" } }),
      request("tasks/get", { taskId }, { headers: { "mcp-name": undefined } }),
      request("tasks/get", { taskId }, { headers: { "mcp-method": undefined } }),
      request("tasks/get", { taskId }, { headers: { "mcp-method": "tasks/cancel" } }),
      request("tasks/get", { taskId }, { headers: { "mcp-protocol-version": undefined } }),
      request("tasks/get", { taskId }, { headers: { "mcp-protocol-version": "2025-11-25" } }),
      request("tasks/get", { taskId: 5 }, { headers: { "mcp-name": "5" } }),
      request("tasks/get", { taskId: "" }, { headers: { "mcp-name": "" } }),
      request("tasks/update", { taskId, inputResponses: { nothing: { action: "accept" } } }),
      request("tasks/update", { taskId, inputResponses: 5 }),
      request("tasks/update", { taskId: "unknown" }),
      request("tasks/cancel", { taskId: "unknown" }),
      request("tasks/cancel", { taskId }),
    ];
    for (const [i, req] of cases.entries()) {
      const { lean, reference } = await both(req);
      expect(lean, `case ${i}: ${req.body}`).toEqual(reference);
    }
    // The run writes the cancellation after the cancel was answered: compare the task once
    // that write is in, not a read racing it.
    await h.runner.settled(taskId);
    const { lean, reference } = await both(request("tasks/get", { taskId }));
    expect(lean).toEqual(reference);
    expect(JSON.stringify(lean.body)).toContain('"status":"cancelled"');
  });

  it("classifies every request exactly as the SDK's classifyInboundRequest", () => {
    const meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": WITH_EXT,
      "io.modelcontextprotocol/clientInfo": { name: "c", version: "1" },
    };
    const plain = {
      jsonrpc: "2.0",
      id: 1,
      method: "tasks/get",
      params: { taskId: "t", _meta: meta },
    };
    const headers = {
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tasks/get",
      "mcp-name": "t",
    };
    const cases: [Record<string, string>, unknown][] = [
      [headers, plain],
      [headers, plain], // remembered
      [headers, { ...plain, id: "s" }],
      [headers, { ...plain, id: 1.5 }],
      [headers, { ...plain, extra: true }],
      [{ ...headers, "mcp-method": "tasks/cancel" }, plain],
      [{ ...headers, "mcp-protocol-version": "2025-11-25" }, plain],
      [{}, plain],
      [
        headers,
        {
          ...plain,
          params: { taskId: "t", _meta: { ...meta, "io.modelcontextprotocol/clientInfo": 5 } },
        },
      ],
      [headers, { ...plain, params: { taskId: "t", _meta: { ...meta, progressToken: {} } } }],
      [
        headers,
        {
          ...plain,
          params: {
            taskId: "t",
            _meta: { ...meta, "io.modelcontextprotocol/protocolVersion": "2025-11-25" },
          },
        },
      ],
      [headers, { ...plain, method: "initialize" }],
      [headers, { jsonrpc: "2.0", method: "notifications/cancelled", params: { _meta: meta } }],
      [headers, [plain]],
      [{}, { jsonrpc: "2.0", id: 1, method: "tools/list" }],
      [
        { "mcp-protocol-version": "2025-11-25" },
        { jsonrpc: "2.0", id: 1, method: "tasks/get", params: { taskId: "t" } },
      ],
      [
        { "mcp-protocol-version": "2026-07-28" },
        { jsonrpc: "2.0", id: 1, method: "tasks/get", params: { taskId: "t" } },
      ],
      [
        { "mcp-protocol-version": "1999-01-01" },
        { jsonrpc: "2.0", id: 1, method: "tasks/get", params: { taskId: "t" } },
      ],
      [
        {},
        {
          jsonrpc: "2.0",
          id: 1,
          method: "tasks/get",
          params: { taskId: "t", _meta: { progressToken: {} } },
        },
      ],
      [{}, { jsonrpc: "2.0", id: 1, method: "tasks/get", params: [] }],
      [{}, { jsonrpc: "2.0", id: 2 ** 60, method: "tasks/get" }],
      [headers, { jsonrpc: "2.0", id: 1, result: {} }],
      [headers, "text"],
    ];
    for (const [i, [head, body]] of cases.entries()) {
      const expected = classifyInboundRequest({
        httpMethod: "POST",
        ...(head["mcp-protocol-version"] !== undefined && {
          protocolVersionHeader: head["mcp-protocol-version"],
        }),
        ...(head["mcp-method"] !== undefined && { mcpMethodHeader: head["mcp-method"] }),
        ...(head["mcp-name"] !== undefined && { mcpNameHeader: head["mcp-name"] }),
        body,
      });
      expect(handler.classify(head, body), `case ${i}`).toEqual(expected);
    }
  });

  it("keeps tasks owner-scoped on the lean path", async () => {
    const taskId = await startTask(h, "work", { gate: "hold" });
    owner = BOB;
    const { lean, reference } = await both(request("tasks/get", { taskId }));
    expect(lean.body).toMatchObject({ error: { code: -32602 } });
    expect(lean).toEqual(reference);
  });

  it("serves everything else through the SDK with the parsed body", async () => {
    const discover = await both(request("server/discover", {}));
    expect(discover.lean.status).toBe(200);
    expect(discover.lean).toEqual(discover.reference);
    const list = await both(request("tools/list", {}));
    expect(list.lean).toEqual(list.reference);
    const legacy = await read(
      await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      }),
    );
    expect(legacy.status).toBe(400);
  });

  it("answers a malformed body -32700 and an oversized one 413, never a 5xx", async () => {
    const parse = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    expect(parse.status).toBe(400);
    expect(((await parse.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const small = createNodeTasksHandler(h.ext, { maxBodyBytes: 64 });
    const tiny = createServer((req, res) => void small.handle(req, res, { owner }));
    await new Promise<void>((resolve) => tiny.listen(0, "127.0.0.1", resolve));
    const big = await fetch(`http://127.0.0.1:${(tiny.address() as AddressInfo).port}/mcp`, {
      method: "POST",
      ...request("tools/list", { padding: "x".repeat(1000) }),
    });
    expect(big.status).toBe(413);
    // A client still sending hears the 413 (or the 415) once its body is in, not mid-body,
    // when an answer that closes the connection would reach it as a reset (EPIPE).
    const port = (tiny.address() as AddressInfo).port;
    const body = "x".repeat(1_200_000);
    const length = { "content-length": String(body.length) };
    const cases: [string, Record<string, string>, number][] = [
      ["announced too large", { "content-type": "application/json", ...length }, 413],
      ["found too large (chunked)", { "content-type": "application/json" }, 413],
      ["not JSON", { "content-type": "text/plain", ...length }, 415],
    ];
    for (const [name, headers, status] of cases) {
      const outcome = await postInTwoParts(port, body, headers);
      expect(outcome, name).toEqual({ status, answeredMidBody: false });
    }
    await small.close();
    await new Promise<void>((resolve) => tiny.close(() => resolve()));
  });

  it("streams a task listen from the parsed body", async () => {
    const taskId = await startTask(h, "work", { gate: "listen" });
    const response = await fetch(url, {
      method: "POST",
      ...request("subscriptions/listen", { notifications: { taskIds: [taskId] } }),
    });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    h.gates.open("listen");
    const text = await response.text();
    expect(text).toContain("notifications/subscriptions/acknowledged");
    expect(text).toContain('"status":"completed"');
    expect(text).toContain('"resultType":"complete"');
  });
});
