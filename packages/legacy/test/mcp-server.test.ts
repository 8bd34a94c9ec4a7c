// The user's own McpServer, served to 2025-11-25 clients (the SDK 1.x client) with tasks
// attached, one instance per session: its tools, prompts and resources answer exactly as
// the McpServer alone answers them, and task tools declared the SDK way run as tasks
// through `callToolStream`. Real HTTP on 127.0.0.1.
import { createServer, type Server as HttpServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { TaskRunner, TaskService } from "@mcp-tasks/core";
import { taskTool } from "@mcp-tasks/mcp-server";
import { MemoryTaskStore } from "@mcp-tasks/store-memory";
import { toNodeHandler } from "@modelcontextprotocol/node";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { completable, createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createLegacyHandler } from "../src/index.js";
import { ownerFromHeader } from "./fixtures.js";

/** The user's server as they had it before tasks: a tool, a prompt, a resource. */
function userServer(): McpServer {
  const server = new McpServer(
    { name: "calculator", version: "1.0.0" },
    { capabilities: { logging: {} } },
  );
  server.registerTool(
    "add",
    {
      description: "Adds two numbers",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      annotations: { readOnlyHint: true },
    },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
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
    description: "Writes a report",
    inputSchema: z.object({ topic: z.string() }),
    annotations: { readOnlyHint: true },
  },
  async ({ topic }, task) => {
    await task.setStatusMessage(`writing about ${topic}`);
    return { content: [{ type: "text", text: `Report on ${topic}` }] };
  },
);

const onlyTask = taskTool(
  "only_task",
  { inputSchema: z.object({}), taskSupport: "required" },
  async () => ({ content: [{ type: "text", text: "done" }] }),
);

async function listen(listener: RequestListener): Promise<{ http: HttpServer; url: URL }> {
  const http = createServer(listener);
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return { http, url: new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`) };
}

describe("an existing McpServer with tasks attached, 2025-11-25 (SDK 1.x client)", () => {
  const service = new TaskService({ store: new MemoryTaskStore(), pollIntervalMs: 20 });
  const tools = [slowReport, onlyTask];
  const runner = new TaskRunner({ service, tools });
  const legacy = createLegacyHandler({
    service,
    runner,
    tools,
    ownerOf: ownerFromHeader,
    serverInfo: { name: "calculator", version: "1.0.0" },
    server: () => userServer(),
    onError: () => {},
  });
  // The same McpServer without tasks, served statelessly by the SDK itself.
  const alone = createMcpHandler(() => userServer());
  let withTasks: { http: HttpServer; url: URL };
  let withoutTasks: { http: HttpServer; url: URL };
  const clients: Client[] = [];

  async function connect(url: URL): Promise<Client> {
    const client = new Client({ name: "sdk1", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(url, { requestInit: { headers: { "x-owner": "alice" } } }),
    );
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    withTasks = await listen(toNodeHandler(legacy) as RequestListener);
    withoutTasks = await listen(toNodeHandler(alone) as RequestListener);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await legacy.close();
    await alone.close();
    await runner.shutdown({ drainMs: 1000 });
    await new Promise((resolve) => withTasks.http.close(resolve));
    await new Promise((resolve) => withoutTasks.http.close(resolve));
  });

  it("advertises tasks and lists the server's tools unchanged, task tools with taskSupport", async () => {
    const mine = await connect(withTasks.url);
    const theirs = await connect(withoutTasks.url);
    expect(mine.getServerCapabilities()?.tasks).toMatchObject({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const listed = (await mine.listTools()).tools;
    const own = (await theirs.listTools()).tools;
    expect(listed.find((t) => t.name === "add")).toEqual(own.find((t) => t.name === "add"));
    expect(listed.find((t) => t.name === "slow_report")).toMatchObject({
      annotations: { readOnlyHint: true },
      execution: { taskSupport: "optional" },
      inputSchema: { type: "object", properties: { topic: { type: "string" } } },
    });
    expect(listed.find((t) => t.name === "only_task")?.execution).toEqual({
      taskSupport: "required",
    });
  });

  it("answers the server's own tool, prompts, resources, completions and logging exactly as the McpServer alone", async () => {
    const mine = await connect(withTasks.url);
    const theirs = await connect(withoutTasks.url);
    for (const args of [{ a: 2, b: 3 }, { a: "x", b: 3 }, {}]) {
      expect(await mine.callTool({ name: "add", arguments: args })).toEqual(
        await theirs.callTool({ name: "add", arguments: args }),
      );
    }
    expect(await mine.callTool({ name: "add", arguments: { a: 2, b: 3 } })).toMatchObject({
      content: [{ type: "text", text: "5" }],
    });
    const bad = await mine.callTool({ name: "add", arguments: { a: "x", b: 3 } });
    expect(bad.isError).toBe(true);
    expect(JSON.stringify(bad.content)).toContain("Input validation error");
    expect(await mine.getPrompt({ name: "greet", arguments: { name: "Ada" } })).toEqual(
      await theirs.getPrompt({ name: "greet", arguments: { name: "Ada" } }),
    );
    expect(await mine.readResource({ uri: "memo://readme" })).toEqual(
      await theirs.readResource({ uri: "memo://readme" }),
    );
    const completion = {
      ref: { type: "ref/prompt" as const, name: "greet" },
      argument: { name: "name", value: "A" },
    };
    expect(await mine.complete(completion)).toEqual(await theirs.complete(completion));
    expect((await mine.complete(completion)).completion.values).toEqual(["Ada", "Alan"]);
    expect(await mine.setLoggingLevel("warning")).toEqual(await theirs.setLoggingLevel("warning"));
    expect(mine.getServerCapabilities()?.logging).toEqual({});
  });

  it("runs a task tool as a task through callToolStream", async () => {
    const client = await connect(withTasks.url);
    const messages = [];
    for await (const message of client.experimental.tasks.callToolStream(
      { name: "slow_report", arguments: { topic: "tides" } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    )) {
      messages.push(message);
    }
    expect(messages[0]?.type).toBe("taskCreated");
    const last = messages.at(-1);
    if (last?.type !== "result") throw new Error(`no result: ${JSON.stringify(last)}`);
    expect(last.result.content).toEqual([{ type: "text", text: "Report on tides" }]);
  });

  it("answers a task tool without params.task in the request, validated by the McpServer", async () => {
    const client = await connect(withTasks.url);
    expect(await client.callTool({ name: "slow_report", arguments: { topic: "x" } })).toMatchObject(
      { content: [{ type: "text", text: "Report on x" }] },
    );
    const bad = await client.callTool({ name: "slow_report", arguments: { topic: 7 } });
    expect(bad.isError).toBe(true);
    expect((bad.content as { text: string }[])[0]?.text).toMatch(
      /^Input validation error: Invalid arguments for tool slow_report: topic: /,
    );
    await expect(client.callTool({ name: "only_task", arguments: {} })).rejects.toThrow(
      /requires task augmentation/,
    );
  });
});
