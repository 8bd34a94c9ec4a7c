import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  McpError,
  TaskStatusNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RELATED_TASK_META_KEY } from "../src/index.js";
import {
  Gate,
  memoryStore,
  type RunningServer,
  type StoreFixture,
  stack,
  startServer,
} from "./fixtures.js";
import { postgresStore } from "./stores.js";

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

describe.each([memoryStore, postgresStore])(
  "@modelcontextprotocol/sdk 1.x Client (experimental tasks, tasks/result path) on the $name store",
  (factory) => {
    let fixture: StoreFixture;
    let server: RunningServer;
    const clients: Client[] = [];

    beforeAll(async () => {
      fixture = await factory.create();
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

    it("cancels a running task", async () => {
      const c = await client("alice");
      server.stack.gates.set("cancel-me", new Gate());
      const created = await c.request(
        {
          method: "tools/call",
          params: { name: "slow_echo", arguments: { gate: "cancel-me" }, task: {} },
        },
        CreateTaskResultSchema,
      );
      const cancelled = await c.experimental.tasks.cancelTask(created.task.taskId);
      expect(cancelled.status).toBe("cancelled");
      expect((await c.experimental.tasks.getTask(created.task.taskId)).status).toBe("cancelled");
      await expect(c.experimental.tasks.cancelTask(created.task.taskId)).rejects.toMatchObject({
        code: -32602,
      });
    });

    it("reports a tool error as a failed task whose result is the CallToolResult", async () => {
      const c = await client("alice");
      const messages = [];
      for await (const message of c.experimental.tasks.callToolStream(
        { name: "failing_job", arguments: {} },
        CallToolResultSchema,
        { task: {} },
      )) {
        messages.push(message);
      }
      const created = messages[0];
      if (created?.type !== "taskCreated") throw new Error("no task");
      expect(messages.at(-1)?.type).toBe("error");
      const task = await c.experimental.tasks.getTask(created.task.taskId);
      expect(task.status).toBe("failed");
      expect(task.statusMessage).toBe("the job failed");
      const result = await c.experimental.tasks.getTaskResult(
        created.task.taskId,
        CallToolResultSchema,
      );
      expect(result.isError).toBe(true);
      expect(result.content).toEqual([{ type: "text", text: "the job failed" }]);
    });

    it("returns the original JSON-RPC error from tasks/result", async () => {
      const c = await client("alice");
      const created = await c.request(
        { method: "tools/call", params: { name: "protocol_error_job", arguments: {}, task: {} } },
        CreateTaskResultSchema,
      );
      const error = await c.experimental.tasks
        .getTaskResult(created.task.taskId, CallToolResultSchema)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpError);
      expect(error).toMatchObject({ code: -32050, data: { retry: false } });
    });

    it("answers an input_required elicitation delivered on the tasks/result stream", async () => {
      const c = await client("alice", { elicitation: true, noStandaloneStream: true });
      const seen: unknown[] = [];
      c.setRequestHandler(ElicitRequestSchema, async (request) => {
        seen.push(request.params._meta?.[RELATED_TASK_META_KEY]);
        return { action: "accept", content: { ok: true } };
      });
      const messages = [];
      for await (const message of c.experimental.tasks.callToolStream(
        { name: "confirm", arguments: { question: "Ship it?" } },
        CallToolResultSchema,
        { task: {} },
      )) {
        messages.push(message);
      }
      const created = messages[0];
      if (created?.type !== "taskCreated") throw new Error("no task");
      const last = messages.at(-1);
      if (last?.type !== "result") throw new Error(`no result: ${JSON.stringify(last)}`);
      expect(last.result.content).toEqual([
        { type: "text", text: 'answer: {"action":"accept","content":{"ok":true}}' },
      ]);
      expect(seen).toEqual([{ taskId: created.task.taskId }]);
      // The elicitation travelled on the tasks/result response stream.
      const resultStreams = await Promise.all(
        server.tap.exchanges.filter((e) => e.method === "tasks/result").map((e) => e.responseText),
      );
      expect(resultStreams.some((t) => t.includes('"method":"elicitation/create"'))).toBe(true);
    });

    it("answers an input_required elicitation when the session stream is open too", async () => {
      const c = await client("alice", { elicitation: true });
      c.setRequestHandler(ElicitRequestSchema, async () => ({
        action: "accept",
        content: { ok: false },
      }));
      const messages = [];
      for await (const message of c.experimental.tasks.callToolStream(
        { name: "confirm", arguments: {} },
        CallToolResultSchema,
        { task: {} },
      )) {
        messages.push(message);
      }
      const last = messages.at(-1);
      if (last?.type !== "result") throw new Error(`no result: ${JSON.stringify(last)}`);
      expect(last.result.content).toEqual([
        { type: "text", text: 'answer: {"action":"accept","content":{"ok":false}}' },
      ]);
    });

    it("fails a task that needs a capability the client did not declare", async () => {
      const c = await client("alice");
      const created = await c.request(
        { method: "tools/call", params: { name: "confirm", arguments: {}, task: {} } },
        CreateTaskResultSchema,
      );
      const error = await c.experimental.tasks
        .getTaskResult(created.task.taskId, CallToolResultSchema)
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: -32603 });
      const task = await c.experimental.tasks.getTask(created.task.taskId);
      expect(task.status).toBe("failed");
      expect(task.statusMessage).toContain("elicitation");
    });

    it("keeps a second owner from seeing, listing, reading or cancelling the task", async () => {
      const a = await client("alice");
      const b = await client("bob");
      server.stack.gates.set("private", new Gate());
      const created = await a.request(
        {
          method: "tools/call",
          params: { name: "slow_echo", arguments: { gate: "private" }, task: {} },
        },
        CreateTaskResultSchema,
      );
      const { taskId } = created.task;
      await expect(b.experimental.tasks.getTask(taskId)).rejects.toMatchObject({ code: -32602 });
      await expect(
        b.experimental.tasks.getTaskResult(taskId, CallToolResultSchema),
      ).rejects.toMatchObject({ code: -32602 });
      await expect(b.experimental.tasks.cancelTask(taskId)).rejects.toMatchObject({ code: -32602 });
      const listed = await b.experimental.tasks.listTasks();
      expect(listed.tasks.map((t) => t.taskId)).not.toContain(taskId);
      const own = await a.experimental.tasks.listTasks();
      expect(own.tasks.map((t) => t.taskId)).toContain(taskId);
      expect((await a.experimental.tasks.getTask(taskId)).status).toBe("working");
      server.stack.gates.get("private")?.open();
      const result = await a.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      expect(result.content).toEqual([{ type: "text", text: "echo: " }]);
    });

    it("sends notifications/tasks/status on status changes and progress with the original token", async () => {
      const c = await client("alice");
      const statuses: { taskId: string; status: string }[] = [];
      c.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
        statuses.push({ taskId: notification.params.taskId, status: notification.params.status });
      });
      const progress: { progress: number; message?: string | undefined }[] = [];
      server.stack.gates.set("notify", new Gate());
      let taskId = "";
      for await (const message of c.experimental.tasks.callToolStream(
        { name: "slow_echo", arguments: { gate: "notify" } },
        CallToolResultSchema,
        {
          task: {},
          onprogress: (p) => {
            progress.push({ progress: p.progress, message: p.message });
          },
        },
      )) {
        if (message.type === "taskCreated") taskId = message.task.taskId;
        if (message.type === "taskStatus" && message.task.statusMessage === "working on it") {
          server.stack.gates.get("notify")?.open();
        }
      }
      // The terminal notification may still be in flight on the session stream.
      await waitUntil(() => statuses.some((s) => s.taskId === taskId && s.status === "completed"));
      expect(statuses.filter((s) => s.taskId === taskId).map((s) => s.status)).toEqual([
        "completed",
      ]);
      expect(progress).toEqual([{ progress: 1, message: "working on it" }]);
    });

    it("forwards the handler's own progress reports with the original token, in order", async () => {
      const c = await client("alice");
      const progress: {
        progress: number;
        total?: number | undefined;
        message?: string | undefined;
      }[] = [];
      server.stack.gates.set("count", new Gate());
      let result: unknown;
      for await (const message of c.experimental.tasks.callToolStream(
        { name: "counting_job", arguments: { gate: "count" } },
        CallToolResultSchema,
        {
          task: {},
          onprogress: (p) => {
            progress.push({ progress: p.progress, total: p.total, message: p.message });
          },
        },
      )) {
        if (message.type === "taskCreated") server.stack.gates.get("count")?.open();
        if (message.type === "result") result = message.result;
      }
      expect(result).toMatchObject({ content: [{ type: "text", text: "counted" }] });
      expect(progress).toEqual([
        { progress: 1, total: 3, message: "one" },
        { progress: 2, total: 3, message: undefined },
        { progress: 3, total: 3, message: "three" },
      ]);
    });

    it("rejects a request of the session from another owner like an unknown session", async () => {
      const c = await client("alice");
      const transport = c.transport as StreamableHTTPClientTransport;
      const response = await fetch(server.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": transport.sessionId ?? "",
          "mcp-protocol-version": "2025-11-25",
          "x-owner": "bob",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tasks/list", params: {} }),
      });
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ error: { message: "Session not found" } });
    });

    it("sends a synchronous call's elicitation on the tools/call stream", async () => {
      const c = await client("alice", { elicitation: true, noStandaloneStream: true });
      c.setRequestHandler(ElicitRequestSchema, async (request) => {
        expect(request.params._meta?.[RELATED_TASK_META_KEY]).toBeUndefined();
        return { action: "accept", content: { name: "Ada" } };
      });
      const result = await c.callTool({ name: "ask", arguments: {} });
      expect(result.content).toEqual([
        { type: "text", text: 'reply: {"action":"accept","content":{"name":"Ada"}}' },
      ]);
    });

    it("runs a preflight elicitation on the tools/call stream before the task exists", async () => {
      const c = await client("alice", { elicitation: true, noStandaloneStream: true });
      c.setRequestHandler(ElicitRequestSchema, async () => ({
        action: "accept",
        content: { name: "Grace" },
      }));
      const messages = [];
      for await (const message of c.experimental.tasks.callToolStream(
        { name: "greet_later", arguments: {} },
        CallToolResultSchema,
        { task: {} },
      )) {
        messages.push(message);
      }
      expect(messages[0]?.type).toBe("taskCreated");
      const last = messages.at(-1);
      if (last?.type !== "result") throw new Error(`no result: ${JSON.stringify(last)}`);
      expect(last.result.content).toEqual([{ type: "text", text: "Hello, Grace!" }]);
    });
  },
);

/** Resolves once `condition` holds, checking on each macrotask turn (no timing assertion). */
async function waitUntil(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !condition(); i++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
