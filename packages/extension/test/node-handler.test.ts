import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ANONYMOUS, type Owner, type TaskRecord } from "@mcp-tasks/core";
import {
  classifyInboundRequest,
  createMcpHandler,
  type McpHttpHandler,
} from "@modelcontextprotocol/server";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createNodeTasksHandler, createTasksServer, type NodeTasksHandler } from "../src/index.js";
import { matchDirectToolCall } from "../src/node/direct-tool-call.js";
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
    meta?: Record<string, unknown>;
  } = {},
) {
  const name =
    typeof params.taskId === "string"
      ? params.taskId
      : typeof params.name === "string"
        ? params.name
        : undefined;
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
        ...options.meta,
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

/** Headers that belong to the connection, not to the answer (node:http adds them). */
const TRANSPORT_HEADERS = new Set([
  "date",
  "connection",
  "keep-alive",
  "content-length",
  "transfer-encoding",
]);

/** Status, the answer's own headers, and the exact body text. */
async function readExact(response: Response) {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, key) => {
    if (!TRANSPORT_HEADERS.has(key)) headers[key] = value;
  });
  return { status: response.status, headers, text: await response.text() };
}

/** A body text with the created task's id and timestamps replaced by placeholders. */
function normalized(text: string): string {
  return text
    .replace(/"taskId":"[^"]+"/g, '"taskId":"<id>"')
    .replace(/"(createdAt|lastUpdatedAt)":"[^"]+"/g, '"$1":"<time>"');
}

function createdTaskId(text: string): string | undefined {
  return /"resultType":"task","taskId":"([^"]+)"/.exec(text)?.[1];
}

/** What a stored task says about its creation (not its id, clock readings or lease). */
function creation(record: TaskRecord) {
  const { owner, era, request, ttlMs, ttlAnchor, pollIntervalMs, traceContext } = record;
  return { owner, era, request, ttlMs, ttlAnchor, pollIntervalMs, traceContext };
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

  /**
   * Each request through the node handler and through the SDK: the same status, headers and
   * body text (the created task's id and times aside), the same task stored; and whether
   * the node handler took it directly.
   */
  async function expectToolCalls(
    cases: readonly (readonly [
      string,
      { headers: Record<string, string>; body: string },
      boolean,
    ])[],
    extension = h.ext,
    service = h.service,
  ) {
    for (const [label, req, direct] of cases) {
      const body = JSON.parse(req.body) as unknown;
      const route = handler.classify(req.headers, body);
      const taken = matchDirectToolCall(req.headers, body, route, extension.tools) !== undefined;
      expect(taken, `${label}: taken directly`).toBe(direct);
      const lean = await readExact(await fetch(url, { method: "POST", ...req }));
      const reference = await readExact(
        await sdk.fetch(new Request(url, { method: "POST", headers: req.headers, body: req.body })),
      );
      expect({ ...lean, text: normalized(lean.text) }, label).toEqual({
        ...reference,
        text: normalized(reference.text),
      });
      const leanId = createdTaskId(lean.text);
      const referenceId = createdTaskId(reference.text);
      expect(leanId === undefined, `${label}: a task in one answer only`).toBe(
        referenceId === undefined,
      );
      if (leanId !== undefined && referenceId !== undefined) {
        const [a, b] = await Promise.all([
          service.get(owner, leanId),
          service.get(owner, referenceId),
        ]);
        expect(creation(a), `${label}: stored task`).toEqual(creation(b));
      }
    }
  }

  it("answers a task-creating tools/call directly, exactly as the SDK does", async () => {
    const hold = { gate: "hold" };
    const call = (
      name: string,
      args: unknown,
      options: Parameters<typeof request>[2] = {},
      extra: Record<string, unknown> = {},
    ) =>
      request(
        "tools/call",
        { name, ...(args !== undefined && { arguments: args }), ...extra },
        options,
      );
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    await expectToolCalls([
      ["a task tool", call("work", hold), true],
      ["a string id", call("work", hold, { id: "call-1" }), true],
      ["no arguments", call("work", undefined), true],
      ["a task-only tool", call("tool_error", {}), true],
      ["_meta.traceparent", call("work", hold, { meta: { traceparent } }), true],
      ["traceparent header", call("work", hold, { headers: { traceparent } }), true],
      ["a progress token", call("work", hold, { meta: { progressToken: "p1" } }), true],
      ["arguments of the wrong type", call("work", { gate: 5 }), false],
      ["a missing required argument", call("echo", {}), false],
      ["arguments an array", call("work", []), false],
      ["arguments null", call("work", null), false],
      ["an own __proto__ argument", { ...call("work", {}), body: protoBody() }, false],
      ["an unknown tool", call("nope", {}), false],
      ["a tool answered in the request", call("echo", { text: "x" }), false],
      ["extension not declared, optional tool", call("work", {}, { capabilities: {} }), false],
      [
        "extension not declared, task-only tool",
        call("tool_error", {}, { capabilities: {} }),
        false,
      ],
      ["a tool with a preflight", call("named", {}), false],
      ["Mcp-Name mismatched", call("work", hold, { headers: { "mcp-name": "echo" } }), false],
      ["Mcp-Name missing", call("work", hold, { headers: { "mcp-name": undefined } }), false],
      [
        "Mcp-Name base64",
        call("work", hold, { headers: { "mcp-name": "=?base64?d29yaw==?=" } }),
        false,
      ],
      ["Mcp-Method missing", call("work", hold, { headers: { "mcp-method": undefined } }), false],
      ["Mcp-Method another", call("work", hold, { headers: { "mcp-method": "tasks/get" } }), false],
      [
        "MCP-Protocol-Version missing",
        call("work", hold, { headers: { "mcp-protocol-version": undefined } }),
        false,
      ],
      ["a bad progress token", call("work", hold, { meta: { progressToken: {} } }), false],
      [
        "a bad clientInfo",
        call("work", hold, { meta: { "io.modelcontextprotocol/clientInfo": 5 } }),
        false,
      ],
      ["a legacy params.task", call("work", hold, {}, { task: { ttl: 5000 } }), false],
      ["inputResponses", call("work", hold, {}, { inputResponses: {} }), false],
      [
        "a name not a string",
        call("work", hold, { headers: { "mcp-name": "5" } }, { name: 5 }),
        false,
      ],
    ]);

    function protoBody(): string {
      const { body } = call("work", {});
      return body.replace('"arguments":{}', '"arguments":{"__proto__":{"gate":"x"}}');
    }
  });

  it("answers an anonymous caller's tools/call directly, as the SDK does", async () => {
    owner = ANONYMOUS;
    const anonymous = createServer((req, res) => void handler.handle(req, res));
    await new Promise<void>((resolve) => anonymous.listen(0, "127.0.0.1", resolve));
    const saved = url;
    url = `http://127.0.0.1:${(anonymous.address() as AddressInfo).port}/mcp`;
    try {
      await expectToolCalls([
        ["no owner", request("tools/call", { name: "work", arguments: { gate: "hold" } }), true],
      ]);
    } finally {
      url = saved;
      await new Promise<void>((resolve) => anonymous.close(() => resolve()));
    }
  });

  it("answers a tools/call refused by the store's quota as the SDK does", async () => {
    // One task per owner: the first call fills the quota, every later one is refused.
    const limited = await harness(factory, { maxTasksPerOwner: 1 });
    const full = createNodeTasksHandler(limited.ext, { serverInfo: SERVER_INFO });
    const fullSdk = createMcpHandler(
      () => createTasksServer(limited.ext, { owner, serverInfo: SERVER_INFO }),
      { legacy: "reject" },
    );
    const front = createServer((req, res) => void full.handle(req, res, { owner }));
    await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
    const saved = { url, handler, sdk };
    url = `http://127.0.0.1:${(front.address() as AddressInfo).port}/mcp`;
    handler = full;
    sdk = fullSdk;
    try {
      const req = request("tools/call", { name: "work", arguments: { gate: "hold" } });
      await fetch(url, { method: "POST", ...req });
      await expectToolCalls([["over the owner's quota", req, true]], limited.ext, limited.service);
      const refused = await fetch(url, { method: "POST", ...req });
      expect(await refused.json()).toMatchObject({
        error: { code: -32603, data: { reason: "store_full" } },
      });
    } finally {
      ({ url, handler, sdk } = saved);
      await full.close();
      await fullSdk.close();
      await new Promise<void>((resolve) => front.close(() => resolve()));
      await limited.close();
    }
  });

  it("classifies every request exactly as the SDK's classifyInboundRequest", () => {
    const ICON = { src: "https://example.com/icon.png" };
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
      // Envelopes like the remembered one, compared object by object (see RequestClassifier).
      ...[
        { ...meta, "io.modelcontextprotocol/clientInfo": { name: "c", version: "2" } },
        { ...meta, "io.modelcontextprotocol/clientInfo": { version: "1", name: "c" } },
        { ...meta, "io.modelcontextprotocol/clientInfo": { name: "c", version: "1", x: null } },
        { ...meta, "io.modelcontextprotocol/clientInfo": { name: "c" } },
        { ...meta, "io.modelcontextprotocol/clientInfo": ["c", "1"] },
        { ...meta, "io.modelcontextprotocol/clientCapabilities": { extensions: [] } },
        { ...meta, "io.modelcontextprotocol/clientCapabilities": {} },
        { ...meta, progressToken: 0 },
        // Valid, then the same with one more (invalid) icon: told apart by length.
        {
          ...meta,
          "io.modelcontextprotocol/clientInfo": { name: "c", version: "1", icons: [ICON] },
        },
        {
          ...meta,
          "io.modelcontextprotocol/clientInfo": { name: "c", version: "1", icons: [ICON, 5] },
        },
        // Too long to remember: classified each time.
        { ...meta, "io.modelcontextprotocol/clientInfo": { name: "c".repeat(5000), version: "1" } },
        { ...meta, "io.modelcontextprotocol/clientInfo": { name: "c".repeat(5000), version: "1" } },
        { ...meta, "io.modelcontextprotocol/clientInfo": { name: "c".repeat(5000), version: 1 } },
        meta,
      ].map((m): [Record<string, string>, unknown] => [
        headers,
        { ...plain, params: { taskId: "t", _meta: m } },
      ]),
      [
        { ...headers, "mcp-method": "tasks/cancel" },
        { ...plain, method: "tasks/cancel" },
      ],
      [headers, plain],
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
