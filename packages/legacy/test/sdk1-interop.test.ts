import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RELATED_TASK_META_KEY } from "../src/index.js";
import {
  memoryStore,
  type RunningServer,
  type StoreFixture,
  stack,
  startServer,
} from "./fixtures.js";

async function connect(
  url: URL,
  who: string,
  options: { elicitation?: boolean; noStandaloneStream?: boolean } = {},
) {
  const client = new Client(
    { name: `sdk1-${who}`, version: "1.0.0" },
    { capabilities: options.elicitation ? { elicitation: { form: {} } } : {} },
  );
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { "x-owner": who } },
    ...(options.noStandaloneStream && {
      // A network path that offers no standalone GET stream: the only way to reach the
      // client is the tasks/result stream.
      fetch: (input: string | URL | Request, init?: RequestInit) =>
        init?.method === "GET"
          ? Promise.resolve(new Response(null, { status: 405 }))
          : fetch(input, init),
    }),
  });
  await client.connect(transport);
  return client;
}

describe("@modelcontextprotocol/sdk 1.x Client (experimental tasks, tasks/result path)", () => {
  let fixture: StoreFixture;
  let server: RunningServer;
  const clients: Client[] = [];

  beforeAll(async () => {
    fixture = await memoryStore.create();
    server = await startServer(stack(fixture.store));
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await server.close();
    await fixture.close();
  });

  async function client(who: string, options?: Parameters<typeof connect>[2]) {
    const c = await connect(server.url, who, options);
    clients.push(c);
    return c;
  }

  it("sees the tasks capability and the projected taskSupport", async () => {
    const c = await client("alice");
    expect(c.getServerCapabilities()?.tasks).toEqual({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const { tools } = await c.listTools();
    const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
    expect(support).toMatchObject({
      echo: "forbidden",
      slow_echo: "optional",
      confirm: "required",
    });
  });

  it("creates, polls and reads the result of a task", async () => {
    const c = await client("alice");
    const messages = [];
    for await (const message of c.experimental.tasks.callToolStream(
      { name: "slow_echo", arguments: { text: "hi", ms: 30 } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    )) {
      messages.push(message);
    }
    const types = messages.map((m) => m.type);
    expect(types[0]).toBe("taskCreated");
    expect(types).toContain("taskStatus");
    const last = messages.at(-1);
    expect(last?.type).toBe("result");
    if (last?.type !== "result") throw new Error("no result");
    expect(last.result.content).toEqual([{ type: "text", text: "echo: hi" }]);
    const created = messages[0];
    if (created?.type !== "taskCreated") throw new Error("no task");
    expect(created.task.ttl).toBe(60_000);
    expect(last.result._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId: created.task.taskId });
  });
});
