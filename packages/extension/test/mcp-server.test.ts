// The user's own McpServer, served to 2026-07-28 clients with tasks attached: its tools,
// prompts and resources answer exactly as the McpServer alone answers them, and the task
// tools declared the SDK way run as tasks. Real HTTP on 127.0.0.1, raw 2026 wire.
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { TaskRunner, TaskService } from "@mcp-tasks/core";
import { taskTool } from "@mcp-tasks/mcp-server";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { completable, createMcpHandler, McpServer, Server } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  bindTasksExtension,
  createNodeTasksHandler,
  createTasksServer,
  TasksExtension,
} from "../src/index.js";
import { ALICE, EXT } from "./fixtures.js";

const WITH_EXT = { extensions: { [EXT]: {} } };

/** The user's server as they had it before tasks: a tool, a prompt, a resource. */
function userServer(): McpServer {
  const server = new McpServer({ name: "calculator", version: "1.0.0" });
  server.registerTool(
    "add",
    {
      title: "Add",
      description: "Adds two numbers",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      outputSchema: z.object({ sum: z.number() }),
      annotations: { readOnlyHint: true },
      icons: [{ src: "https://example.com/add.png", mimeType: "image/png" }],
      _meta: { "com.example/kind": "math" },
    },
    async ({ a, b }) => ({
      content: [{ type: "text", text: String(a + b) }],
      structuredContent: { sum: a + b },
    }),
  );
  server.registerPrompt(
    "greet",
    {
      description: "Greets",
      argsSchema: z.object({
        name: completable(z.string(), (value) =>
          ["Ada", "Alan"].filter((n) => n.startsWith(value)),
        ),
      }),
    },
    ({ name }) => ({ messages: [{ role: "user", content: { type: "text", text: `Hi ${name}` } }] }),
  );
  server.registerResource("readme", "memo://readme", { mimeType: "text/plain" }, async () => ({
    contents: [{ uri: "memo://readme", text: "read me" }],
  }));
  return server;
}

const slowReport = taskTool(
  "slow_report",
  {
    title: "Slow report",
    description: "Writes a report",
    inputSchema: z.object({ topic: z.string() }),
    outputSchema: z.object({ topic: z.string() }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    retry: { attempts: 2, backoffMs: 10 },
  },
  async ({ topic }, task) => {
    await task.setStatusMessage(`writing about ${topic}`);
    return {
      content: [{ type: "text", text: `Report on ${topic}` }],
      structuredContent: { topic },
    };
  },
);

const onlyTask = taskTool(
  "only_task",
  { inputSchema: z.object({}), taskSupport: "required" },
  async () => ({ content: [{ type: "text", text: "done" }] }),
);

const noStructured = taskTool(
  "no_structured",
  { inputSchema: z.object({}), outputSchema: z.object({ n: z.number() }) },
  async () => ({ content: [{ type: "text", text: "forgot it" }] }),
);

async function listen(handler: Parameters<typeof createServer>[1]): Promise<HttpServer> {
  const http = createServer(handler);
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return http;
}

function urlOf(http: HttpServer): string {
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
}

let nextId = 1;
async function rpc(
  url: string,
  method: string,
  params: Record<string, unknown>,
  capabilities: unknown = WITH_EXT,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const name =
    typeof params.name === "string"
      ? params.name
      : typeof params.taskId === "string"
        ? params.taskId
        : typeof params.uri === "string"
          ? params.uri
          : undefined;
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      ...(name !== undefined && { "mcp-name": name }),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: nextId++,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": capabilities,
          "io.modelcontextprotocol/clientInfo": { name: "mcp-server-test", version: "1" },
        },
      },
    }),
  });
  const text = await response.text();
  const json = text.startsWith("event:") || text.startsWith("data:") ? sseData(text) : text;
  return { status: response.status, body: JSON.parse(json) as Record<string, unknown> };
}

function sseData(text: string): string {
  const line = text.split("\n").find((l) => l.startsWith("data:"));
  return (line ?? "data: {}").slice(5);
}

/** The answer without the ids and stamps that differ between two servers. */
function comparable(body: Record<string, unknown>): unknown {
  const { id: _id, ...rest } = body;
  const result = rest.result as Record<string, unknown> | undefined;
  if (result?._meta !== undefined) {
    const { "io.modelcontextprotocol/serverInfo": _info, ...meta } = result._meta as Record<
      string,
      unknown
    >;
    return {
      ...rest,
      result: { ...result, _meta: Object.keys(meta).length > 0 ? meta : undefined },
    };
  }
  return rest;
}

describe("an existing McpServer with tasks attached, 2026-07-28", () => {
  const service = new TaskService({ store: new MemoryTaskStore(), pollIntervalMs: 20 });
  const tools = [slowReport, onlyTask, noStructured];
  const runner = new TaskRunner({ service, tools });
  const extension = new TasksExtension({ service, runner, tools });
  let built = 0;
  const withTasks = createNodeTasksHandler(extension, {
    server: () => {
      built += 1;
      return userServer();
    },
    serverInfo: { name: "calculator", version: "1.0.0" },
  });
  const alone = toNodeHandler(createMcpHandler(() => userServer(), { legacy: "reject" }));
  let tasksHttp: HttpServer;
  let aloneHttp: HttpServer;
  let url: string;
  let aloneUrl: string;

  beforeAll(async () => {
    tasksHttp = await listen((req, res) => void withTasks.handle(req, res, { owner: ALICE }));
    aloneHttp = await listen((req, res) => void alone(req as never, res));
    url = urlOf(tasksHttp);
    aloneUrl = urlOf(aloneHttp);
  });
  afterAll(async () => {
    await withTasks.close();
    await runner.shutdown({ drainMs: 1000 });
    await new Promise((resolve) => tasksHttp.close(resolve));
    await new Promise((resolve) => aloneHttp.close(resolve));
  });

  it("lists the server's own tools unchanged, next to the task tools", async () => {
    const listed = await rpc(url, "tools/list", {});
    const own = await rpc(aloneUrl, "tools/list", {});
    const tools = (listed.body.result as { tools: Record<string, unknown>[] }).tools;
    const ownTools = (own.body.result as { tools: Record<string, unknown>[] }).tools;
    expect(tools.find((t) => t.name === "add")).toEqual(ownTools[0]);
    expect(tools.map((t) => t.name)).toEqual(["add", "slow_report", "only_task", "no_structured"]);
    const report = tools.find((t) => t.name === "slow_report");
    expect(report).toMatchObject({
      title: "Slow report",
      annotations: { readOnlyHint: true, openWorldHint: false },
      inputSchema: { type: "object", properties: { topic: { type: "string" } } },
      outputSchema: { type: "object", properties: { topic: { type: "string" } } },
    });
    expect(report).not.toHaveProperty("execution");
  });

  it("answers the server's own tool, good and bad calls, exactly as the McpServer alone", async () => {
    for (const args of [{ a: 2, b: 3 }, { a: "x", b: 3 }, {}]) {
      for (const capabilities of [WITH_EXT, {}]) {
        const mine = await rpc(url, "tools/call", { name: "add", arguments: args }, capabilities);
        const theirs = await rpc(
          aloneUrl,
          "tools/call",
          { name: "add", arguments: args },
          capabilities,
        );
        expect(mine.status).toBe(theirs.status);
        expect(comparable(mine.body)).toEqual(comparable(theirs.body));
      }
    }
    const good = await rpc(url, "tools/call", { name: "add", arguments: { a: 2, b: 3 } });
    expect(good.body.result).toMatchObject({ content: [{ type: "text", text: "5" }] });
    const bad = await rpc(url, "tools/call", { name: "add", arguments: { a: "x", b: 3 } });
    expect(bad.body.result).toMatchObject({ isError: true });
    expect(JSON.stringify(bad.body.result)).toContain("Input validation error");
  });

  it("keeps prompts, resources and completions, and unknown tools answer as the McpServer answers", async () => {
    for (const [method, params] of [
      ["prompts/list", {}],
      ["prompts/get", { name: "greet", arguments: { name: "Ada" } }],
      ["resources/list", {}],
      ["resources/read", { uri: "memo://readme" }],
      [
        "completion/complete",
        { ref: { type: "ref/prompt", name: "greet" }, argument: { name: "name", value: "A" } },
      ],
      ["tools/call", { name: "nope", arguments: {} }],
    ] as const) {
      const mine = await rpc(url, method, params);
      const theirs = await rpc(aloneUrl, method, params);
      expect(mine.status, method).toBe(theirs.status);
      expect(comparable(mine.body), method).toEqual(comparable(theirs.body));
    }
    const completed = await rpc(url, "completion/complete", {
      ref: { type: "ref/prompt", name: "greet" },
      argument: { name: "name", value: "A" },
    });
    expect(completed.body.result).toMatchObject({ completion: { values: ["Ada", "Alan"] } });
  });

  it("runs a task tool as a task for a client that declared the extension", async () => {
    const before = built;
    const created = await rpc(url, "tools/call", {
      name: "slow_report",
      arguments: { topic: "tides" },
    });
    const task = created.body.result as { resultType: string; taskId: string };
    expect(task.resultType).toBe("task");
    // Served by the user's server (no lean path past it): it may answer a call its own way.
    expect(built).toBe(before + 1);
    let final: Record<string, unknown> = {};
    for (let i = 0; i < 200; i++) {
      final = (await rpc(url, "tasks/get", { taskId: task.taskId })).body.result as Record<
        string,
        unknown
      >;
      if (final.status !== "working") break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(final.status).toBe("completed");
    expect(final.result).toMatchObject({
      content: [{ type: "text", text: "Report on tides" }],
      structuredContent: { topic: "tides" },
    });
  });

  it("answers a task tool in the request for a client without the extension, validated by the McpServer", async () => {
    const sync = await rpc(
      url,
      "tools/call",
      { name: "slow_report", arguments: { topic: "x" } },
      {},
    );
    expect(sync.body.result).toMatchObject({
      content: [{ type: "text", text: "Report on x" }],
      structuredContent: { topic: "x" },
    });
    for (const capabilities of [WITH_EXT, {}]) {
      const bad = await rpc(
        url,
        "tools/call",
        { name: "slow_report", arguments: { topic: 7 } },
        capabilities,
      );
      expect(bad.body.result).toMatchObject({ isError: true });
      expect((bad.body.result as { content: { text: string }[] }).content[0]?.text).toMatch(
        /^Input validation error: Invalid arguments for tool slow_report: topic: /,
      );
    }
  });

  it("refuses a task-only tool without the extension with -32021, and checks structured output", async () => {
    const refused = await rpc(url, "tools/call", { name: "only_task", arguments: {} }, {});
    expect((refused.body.error as { code: number }).code).toBe(-32021);
    const sync = await rpc(url, "tools/call", { name: "no_structured", arguments: {} }, {});
    expect(sync.body.result).toMatchObject({
      isError: true,
      content: [
        {
          text: "Output validation error: Tool no_structured has an output schema but no structured content was provided",
        },
      ],
    });
  });
});

describe("task tools on the built-in server, 2026-07-28", () => {
  // `topic` passes the extension's shallow check but not the zod schema: the task is
  // created (the run reports the McpServer's wording), on the lean path as through the SDK.
  const checked = taskTool(
    "checked",
    { inputSchema: z.object({ topic: z.string().min(3) }) },
    async ({ topic }) => ({ content: [{ type: "text", text: topic }] }),
  );
  const service = new TaskService({ store: new MemoryTaskStore(), pollIntervalMs: 20 });
  const tools = [checked, onlyTask];
  const runner = new TaskRunner({ service, tools });
  const extension = new TasksExtension({ service, runner, tools });
  const serverInfo = { name: "built-in", version: "1.0.0" };
  const lean = createNodeTasksHandler(extension, { serverInfo });
  const reference = toNodeHandler(
    createMcpHandler(() => createTasksServer(extension, { owner: ALICE, serverInfo }), {
      legacy: "reject",
    }),
  );
  let leanHttp: HttpServer;
  let referenceHttp: HttpServer;

  beforeAll(async () => {
    leanHttp = await listen((req, res) => void lean.handle(req, res, { owner: ALICE }));
    referenceHttp = await listen((req, res) => void reference(req as never, res));
  });
  afterAll(async () => {
    await lean.close();
    await runner.shutdown({ drainMs: 1000 });
    await new Promise((resolve) => leanHttp.close(resolve));
    await new Promise((resolve) => referenceHttp.close(resolve));
  });

  it("answers taskTool calls, good and bad, as the SDK-served extension does", async () => {
    for (const [name, args, capabilities] of [
      ["checked", { topic: "tides" }, WITH_EXT],
      ["checked", { topic: "ab" }, WITH_EXT],
      ["checked", { topic: 7 }, WITH_EXT],
      ["checked", {}, WITH_EXT],
      ["checked", { topic: "tides" }, {}],
      ["only_task", {}, WITH_EXT],
      ["only_task", {}, {}],
    ] as const) {
      const label = `${name} ${JSON.stringify(args)} ${JSON.stringify(capabilities)}`;
      const mine = await rpc(
        urlOf(leanHttp),
        "tools/call",
        { name, arguments: args },
        capabilities,
      );
      const theirs = await rpc(
        urlOf(referenceHttp),
        "tools/call",
        { name, arguments: args },
        capabilities,
      );
      expect(mine.status, label).toBe(theirs.status);
      expect(stamped(mine.body), label).toEqual(stamped(theirs.body));
    }
    const created = await rpc(urlOf(leanHttp), "tools/call", {
      name: "checked",
      arguments: { topic: "ab" },
    });
    const { taskId } = created.body.result as { taskId: string };
    const ended = await service.waitFor(ALICE, taskId, (t) => t.status !== "working");
    expect(JSON.stringify(ended.outcome)).toContain(
      "Input validation error: Invalid arguments for tool checked",
    );
  });
});

/** An answer without its id, a created task's id and its clock readings. */
function stamped(body: Record<string, unknown>): unknown {
  const { id: _id, ...rest } = body;
  return JSON.parse(
    JSON.stringify(rest)
      .replace(/"taskId":"[^"]+"/g, '"taskId":"<id>"')
      .replace(/"(createdAt|lastUpdatedAt)":"[^"]+"/g, '"$1":"<time>"'),
  );
}

describe("attaching tasks to a server", () => {
  const service = new TaskService({ store: new MemoryTaskStore() });
  const runner = new TaskRunner({ service, tools: [slowReport] });
  const extension = new TasksExtension({ service, runner, tools: [slowReport] });

  it("throws when a task tool would shadow one of the server's tools", () => {
    const server = new McpServer({ name: "s", version: "1" });
    server.registerTool("slow_report", { inputSchema: z.object({}) }, () => ({ content: [] }));
    expect(() => bindTasksExtension(server, extension, ALICE)).toThrow(
      /already has a tool of that name/,
    );
  });

  it("throws when the server answers tools/call with its own handler", () => {
    const mcp = new McpServer({ name: "s", version: "1" });
    mcp.server.registerCapabilities({ tools: {} });
    mcp.server.setRequestHandler("tools/call", () => ({ content: [] }));
    expect(() => bindTasksExtension(mcp, extension, ALICE)).toThrow(/its own handler/);
    const low = new Server({ name: "s", version: "1" }, { capabilities: { tools: {} } });
    low.setRequestHandler("tools/list", () => ({ tools: [] }));
    expect(() => bindTasksExtension(low, extension, ALICE)).toThrow(/already answers tools\/list/);
  });

  it("throws when attached twice", () => {
    const server = new McpServer({ name: "s", version: "1" });
    bindTasksExtension(server, extension, ALICE);
    expect(() => bindTasksExtension(server, extension, ALICE)).toThrow(/already attached/);
  });
});
